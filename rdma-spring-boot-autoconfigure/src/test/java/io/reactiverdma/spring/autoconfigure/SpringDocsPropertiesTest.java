package io.reactiverdma.spring.autoconfigure;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * docs/spring-boot.md's property tables against the generated configuration metadata: every property is
 * documented, and every property a table names exists (so a rename cannot leave the docs behind).
 */
class SpringDocsPropertiesTest {
    private static final Pattern METADATA_NAME = Pattern.compile("\"name\": \"(reactive-rdma\\.[^\"]+)\"");
    private static final Pattern ROW_NAME = Pattern.compile("^\\| `([a-z][a-z0-9.-]*)`", Pattern.MULTILINE);

    @Test
    void everyPropertyInTheMetadataIsInTheDocsAndEveryDocumentedOneExists() throws IOException {
        String all = EveryOptionHasAPropertyTest.metadata();
        // The properties, not the groups (reactive-rdma.client, ...) before them.
        String metadata = all.substring(all.indexOf("\"properties\": ["), all.indexOf("\"hints\": ["));
        String docs = Files.readString(Path.of("..", "docs", "spring-boot.md"));
        List<String> names = new ArrayList<>();
        Matcher m = METADATA_NAME.matcher(metadata);
        while (m.find()) {
            names.add(m.group(1));
        }
        List<String> rows = new ArrayList<>();
        Matcher r = ROW_NAME.matcher(docs);
        while (r.find()) {
            rows.add(r.group(1));
        }
        List<String> undocumented = new ArrayList<>();
        for (String name : names) {
            int at = metadata.indexOf("\"name\": \"" + name + "\"");
            int next = metadata.indexOf("\"name\": ", at + 1);
            boolean deprecated = metadata.substring(at, next < 0 ? metadata.length() : next).contains("\"deprecation\"");
            String side = name.replaceFirst("^reactive-rdma\\.(client|server|rsocket\\.server)\\.", "");
            // The RSocket server takes the RDMA server's properties: its table says so, each row documents both.
            boolean asTheServers = name.startsWith(RdmaRSocketProperties.PREFIX + ".server.")
                    && rows.contains(RdmaProperties.PREFIX + ".server." + side);
            boolean documented = rows.contains(name) || (!side.equals(name) && rows.contains(side)) || asTheServers
                    || (name.startsWith("reactive-rdma.datagram.backoff.") && docs.contains("`.backoff.*`"))
                    || deprecated;
            if (!documented) {
                undocumented.add(name);
            }
        }
        assertThat(undocumented).as("properties in the metadata with no row in docs/spring-boot.md").isEmpty();
        List<String> unknown = new ArrayList<>();
        for (String row : rows) {
            boolean known = row.startsWith("reactive-rdma.") ? names.contains(row)
                    : names.contains("reactive-rdma.client." + row) || names.contains("reactive-rdma.server." + row);
            if (!known && (row.startsWith("reactive-rdma.") || docs.contains("| `" + row + "` | int")
                    || docs.contains("| `" + row + "` | Duration") || docs.contains("| `" + row + "` | DataSize")
                    || docs.contains("| `" + row + "` | boolean") || docs.contains("| `" + row + "` | long"))) {
                unknown.add(row);
            }
        }
        assertThat(unknown).as("properties docs/spring-boot.md documents that do not exist").isEmpty();
    }
}
