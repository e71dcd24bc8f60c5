package io.reactiverdma.reactive.docs;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The artifacts a build consumes: rdma-bom lists exactly the project's published modules (every module but
 * the samples and the BOM itself) at the project's version, every jar module names its Automatic-Module-Name,
 * and the README shows the BOM and the starter.
 */
class RdmaBomTest {
    private static final Pattern MODULE = Pattern.compile("<module>([^<]+)</module>");
    private static final Pattern ARTIFACT = Pattern.compile("<artifactId>([^<]+)</artifactId>\\s*<version>([^<]+)</version>");

    @Test
    void theBomListsEveryPublishedModuleAtTheProjectVersion() throws IOException {
        Path root = DocumentedTypesTest.repositoryRoot();
        String parent = Files.readString(root.resolve("pom.xml"));
        Matcher v = Pattern.compile("<artifactId>reactive-rdma-parent</artifactId>\\s*<version>([^<]+)</version>")
                .matcher(parent);
        assertTrue(v.find());
        String version = v.group(1);

        Set<String> published = new TreeSet<>();
        Matcher m = MODULE.matcher(parent);
        while (m.find()) {
            String dir = m.group(1);
            String pom = Files.readString(root.resolve(dir).resolve("pom.xml"));
            if (dir.startsWith("samples") || dir.equals("rdma-bom")) {
                continue;
            }
            published.add(dir);
            assertTrue(pom.contains("<automatic.module.name>io.reactiverdma."), dir + " names no Automatic-Module-Name");
        }

        String bom = Files.readString(root.resolve("rdma-bom/pom.xml"));
        String managed = bom.substring(bom.indexOf("<dependencyManagement>"), bom.indexOf("</dependencyManagement>"));
        Set<String> listed = new TreeSet<>();
        Matcher a = ARTIFACT.matcher(managed);
        while (a.find()) {
            listed.add(a.group(1));
            assertEquals(version, a.group(2), a.group(1) + "'s version in the BOM");
        }
        assertTrue(bom.contains("<artifactId>rdma-bom</artifactId>\n  <version>" + version + "</version>"),
                "the BOM's own version is the project's");
        assertEquals(published, listed, "modules published vs listed in rdma-bom");

        String readme = Files.readString(root.resolve("README.md"));
        for (String artifact : new String[] {"rdma-bom", "rdma-reactive-api", "rdma-reactive-impl",
                "rdma-spring-boot-starter"}) {
            assertTrue(readme.contains("<artifactId>" + artifact + "</artifactId>"), "README's Maven snippet: " + artifact);
            assertTrue(readme.contains("io.reactiverdma:" + artifact), "README's Gradle snippet: " + artifact);
        }
    }
}
