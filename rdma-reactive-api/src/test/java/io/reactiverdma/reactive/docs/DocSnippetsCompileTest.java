package io.reactiverdma.reactive.docs;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Every {@code ```java} block of the user guides compiles against the API, as an application sees it (this
 * module's test class path: the API, Reactor, Micrometer; no engine). The wrapping convention for fragments
 * is {@link DocSnippets}'s. The Spring guide (docs/spring-boot.md) is not among them: its code needs Spring,
 * which this module does not have; the design docs (threading-model.md, native-bindings.md) show engine
 * internals, not application code.
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
