package io.reactiverdma.reactive.docs;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The docs must name every public type of the modules listed in {@link #SOURCE_ROOTS}, and every public
 * constant (enum constants, {@code RdmaOption}s, {@code ENCODED_SIZE} ...) of those types, each inside an
 * inline code span ({@code `Name`}) of some {@code docs/*.md}. A nested public type counts as named when
 * {@code `Outer.Inner`} appears. Types are found in the source tree, so another module is covered by
 * adding its source root below; constants are checked for the types on this test's class path (the others'
 * types are still checked).
 */
class DocumentedTypesTest {
    /** Source roots, relative to the repository root, whose public types the docs must name. */
    static final List<String> SOURCE_ROOTS = List.of(
            "rdma-reactive-api/src/main/java",
            "rdma-spring-boot-autoconfigure/src/main/java",
            "rdma-test/src/main/java");

    private static final Pattern PACKAGE = Pattern.compile("(?m)^package\\s+([\\w.]+)\\s*;");
    private static final Pattern PUBLIC_TYPE = Pattern.compile(
            "(?m)^([ \\t]*)public\\s+(?:(?:static|final|abstract|sealed|non-sealed|strictfp)\\s+)*"
                    + "(?:class|interface|enum|record|@interface)\\s+(\\w+)");

    /** A public type: its name as the docs must write it, and its binary name for reflection. */
    record PublicType(String docName, String binaryName, Path source) {
    }

    @Test
    void docsNameEveryPublicTypeAndConstant() {
        Path root = repositoryRoot();
        String docs = docsText(root.resolve("docs"));
        List<PublicType> types = new ArrayList<>();
        for (String sourceRoot : SOURCE_ROOTS) {
            types.addAll(publicTypes(root.resolve(sourceRoot)));
        }
        assertTrue(types.stream().anyMatch(t -> t.docName().equals("RdmaConnection")),
                "the scan found no RdmaConnection: it is broken, found " + types);

        List<String> missing = new ArrayList<>();
        for (PublicType t : types) {
            if (!namedInCode(docs, t.docName())) {
                missing.add("type " + t.docName() + " (" + root.relativize(t.source()) + ")");
            }
            for (String constant : publicConstants(t)) {
                if (!namedInCode(docs, constant)) {
                    missing.add("constant " + t.docName() + "." + constant);
                }
            }
        }
        if (!missing.isEmpty()) {
            fail("not named in any docs/*.md inside `...`: document them (docs/programming-guide.md covers the"
                    + " API):\n  " + String.join("\n  ", missing));
        }
    }

    /** True when {@code name} appears as a whole word inside an inline code span. */
    static boolean namedInCode(String docs, String name) {
        return Pattern.compile("`[^`\\n]*(?<![\\w$])" + Pattern.quote(name) + "(?![\\w$])[^`\\n]*`")
                .matcher(docs).find();
    }

    /** The repository root: the parent of this module's directory (Surefire's basedir, else the working directory). */
    static Path repositoryRoot() {
        Path module = Path.of(System.getProperty("basedir", System.getProperty("user.dir"))).toAbsolutePath();
        Path root = module.getParent();
        if (root == null || !Files.isDirectory(root.resolve("docs"))) {
            fail("no docs/ directory next to the module directory " + module);
        }
        return root;
    }

    static String docsText(Path docsDir) {
        try (Stream<Path> files = Files.list(docsDir)) {
            List<Path> md = files.filter(p -> p.toString().endsWith(".md")).sorted().toList();
            assertTrue(!md.isEmpty(), "no .md files in " + docsDir);
            StringBuilder text = new StringBuilder();
            for (Path p : md) {
                text.append(Files.readString(p)).append('\n');
            }
            return text.toString();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Every public top-level type of the source tree, and the public types nested in those. */
    static List<PublicType> publicTypes(Path sourceRoot) {
        if (!Files.isDirectory(sourceRoot)) {
            fail("source root " + sourceRoot + " does not exist: fix DocumentedTypesTest.SOURCE_ROOTS");
        }
        try (Stream<Path> files = Files.walk(sourceRoot)) {
            List<PublicType> types = new ArrayList<>();
            for (Path file : files.filter(p -> p.toString().endsWith(".java")).sorted().toList()) {
                String fileType = file.getFileName().toString().replace(".java", "");
                if (fileType.equals("package-info") || fileType.equals("module-info")) {
                    continue;
                }
                String source = Files.readString(file);
                Matcher pkg = PACKAGE.matcher(source);
                String prefix = pkg.find() ? pkg.group(1) + "." : "";
                Matcher m = PUBLIC_TYPE.matcher(source);
                boolean topLevelPublic = false;
                List<PublicType> nested = new ArrayList<>();
                while (m.find()) {
                    String name = m.group(2);
                    if (m.group(1).isEmpty()) {
                        topLevelPublic |= name.equals(fileType);
                    } else {
                        nested.add(new PublicType(fileType + "." + name, prefix + fileType + "$" + name, file));
                    }
                }
                if (topLevelPublic) {
                    types.add(new PublicType(fileType, prefix + fileType, file));
                    types.addAll(nested);
                } else if (!Pattern.compile("(?m)^(?:(?:final|abstract|sealed|non-sealed|strictfp)\\s+)*"
                        + "(?:class|interface|enum|record|@interface)\\s+" + fileType + "\\b").matcher(source).find()) {
                    // Neither a public nor a package-private declaration of the file's type: the scan is wrong.
                    fail("cannot tell whether " + fileType + " in " + file + " is public: fix DocumentedTypesTest's patterns");
                }
            }
            return types;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The public static fields of the type when it is on the class path (enum constants included), else none. */
    static List<String> publicConstants(PublicType type) {
        Class<?> c;
        try {
            c = Class.forName(type.binaryName(), false, DocumentedTypesTest.class.getClassLoader());
        } catch (ClassNotFoundException e) {
            return List.of();
        }
        return Stream.of(c.getDeclaredFields())
                .filter(f -> Modifier.isPublic(f.getModifiers()) && Modifier.isStatic(f.getModifiers()))
                .map(Field::getName)
                .collect(Collectors.toList());
    }
}
