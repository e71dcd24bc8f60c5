package io.reactiverdma.reactive.docs;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Every {@code ```java} block of the user guides compiles against the API, as an application sees it (this
 * module's test class path: the API, Reactor, Micrometer; no engine). The wrapping convention for fragments
 * is {@link DocSnippets}'s. The guides whose code needs more than the API are compiled where their class path
 * is, by the same rules ({@link GuideSnippets}): docs/testing.md by rdma-test's doc test, docs/spring-boot*.md by
 * the auto-configuration's, docs/rsocket.md by the RSocket module's; the design docs ({@link #DESIGN_DOCS}) show
 * engine internals, not application code. {@link #everyGuideWithJavaCodeIsCompiledByADocTest} keeps it so: a
 * guide with java code that no doc test compiles fails the build.
 */
class DocSnippetsCompileTest {
    /** The user guides, relative to the repository root. */
    static final List<String> USER_GUIDES = List.of(
            "README.md",
            "docs/getting-started.md",
            "docs/programming-guide.md",
            "docs/server-guide.md",
            "docs/flow-control.md",
            "docs/failure-semantics.md",
            "docs/memory-and-buffers.md",
            "docs/metrics-reference.md",
            "docs/troubleshooting.md");

    /** Docs whose java blocks show the engine's internals (not compiled: they are not application code). */
    static final List<String> DESIGN_DOCS = List.of("docs/threading-model.md", "docs/native-bindings.md");

    /**
     * The rule that picks up a guide when it lands (docs/rsocket.md, written in parallel, among them): every
     * Markdown file of the repository root and docs/ with a {@code ```java} block is compiled by this test, is a
     * design doc, or is named in the source of another module's doc test (a {@code *SnippetsCompileTest.java}
     * using {@link GuideSnippets}).
     */
    @Test
    void everyGuideWithJavaCodeIsCompiledByADocTest() throws IOException {
        Path root = DocumentedTypesTest.repositoryRoot();
        List<Path> docTests;
        try (Stream<Path> files = Files.walk(root)) {
            docTests = files.filter(f -> f.getFileName().toString().endsWith("SnippetsCompileTest.java"))
                    .filter(f -> !f.toString().contains("/target/"))
                    .filter(f -> !f.getFileName().toString().equals("DocSnippetsCompileTest.java")).toList();
        }
        String claimed = "";
        for (Path t : docTests) {
            claimed += Files.readString(t);
        }
        List<Path> docs = new ArrayList<>();
        docs.add(root.resolve("README.md"));
        try (Stream<Path> files = Files.list(root.resolve("docs"))) {
            files.filter(f -> f.toString().endsWith(".md")).sorted().forEach(docs::add);
        }
        List<String> unclaimed = new ArrayList<>();
        for (Path doc : docs) {
            String name = root.relativize(doc).toString();
            if (DocSnippets.blocks(doc).isEmpty() || USER_GUIDES.contains(name) || DESIGN_DOCS.contains(name)) {
                continue;
            }
            boolean byGlob = name.startsWith("docs/spring-boot") && claimed.contains("docs/spring-boot*.md");
            if (!byGlob && !claimed.contains("\"" + name + "\"")) {
                unclaimed.add(name);
            }
        }
        assertEquals(List.of(), unclaimed, "guides with java code that no doc test compiles: add each to the"
                + " doc test of the module whose class path its code needs (a *SnippetsCompileTest calling"
                + " GuideSnippets.assertEveryJavaBlockCompiles(List.of(\"docs/x.md\"), dir)), or to DESIGN_DOCS");
        assertTrue(docTests.size() >= 2, "found only the doc tests " + docTests + ": is the search broken?");
    }

    @Test
    void everyJavaBlockOfTheUserGuidesCompiles(@TempDir Path classes) {
        Path root = DocumentedTypesTest.repositoryRoot();
        List<DocSnippets.Block> blocks = new ArrayList<>();
        for (String guide : USER_GUIDES) {
            Path file = root.resolve(guide);
            assertTrue(Files.isRegularFile(file), "user guide " + guide + " is missing: fix USER_GUIDES");
            blocks.addAll(DocSnippets.blocks(file));
        }
        assertTrue(blocks.size() >= 30, "found only " + blocks.size() + " java blocks: is the extraction broken?");
        assertTrue(blocks.stream().anyMatch(DocSnippets.Block::wholeFile), "getting-started's program was not found");

        List<DocSnippets.Failure> failures = DocSnippets.compile(blocks, DocSnippets.testClassPath(), classes);
        if (!failures.isEmpty()) {
            fail("java blocks of the user guides that do not compile (a fragment's undeclared names go in a"
                    + " <!-- snippet-context: ... --> comment right before its fence; see DocSnippets):\n  "
                    + failures.stream().map(f -> DocSnippets.relative(root, f.file()) + ":" + f.line() + ": " + f.message())
                            .collect(Collectors.joining("\n  ")));
        }
    }

    /** The test can fail: a broken fragment and a broken whole file are each reported at their Markdown line. */
    @Test
    void aBlockThatDoesNotCompileIsReportedWithItsFileAndLine(@TempDir Path dir) throws IOException {
        Path md = dir.resolve("guide.md");
        Files.writeString(md, String.join("\n",
                "# A guide",                                              // 1
                "",                                                       // 2
                "<!-- snippet-context: RdmaConnection conn -->",          // 3
                "```java",                                                // 4
                "Mono<Void> ok = conn.send(ByteBuffer.allocate(4));",     // 5
                "Mono<Void> broken = conn.sendd(ByteBuffer.allocate(4));", // 6
                "```",                                                    // 7
                "",                                                       // 8
                "```java",                                                // 9
                "package x;",                                             // 10
                "public final class Y {",                                 // 11
                "    int z = \"not an int\";",                            // 12
                "}",                                                      // 13
                "```",                                                    // 14
                "```java",                                                // 15
                "RdmaClient client = RdmaClient.create().host(\"10.0.0.1\");", // 16: compiles, no context
                "```",
                ""));
        List<DocSnippets.Block> blocks = DocSnippets.blocks(md);
        assertEquals(3, blocks.size());
        List<DocSnippets.Failure> failures = DocSnippets.compile(blocks, DocSnippets.testClassPath(), dir.resolve("out"));
        assertEquals(List.of(6, 12), failures.stream().map(DocSnippets.Failure::line).toList(), failures.toString());
        assertTrue(failures.get(0).message().contains("sendd"), failures.get(0).message());
        assertTrue(failures.stream().allMatch(f -> f.file().equals(md)), failures.toString());
    }
}
