package io.reactiverdma.reactive.docs;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.PathMatcher;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The doc test of a module whose test class path a guide's code needs (the API's own guides are compiled by
 * {@link DocSnippetsCompileTest}; docs/testing.md by rdma-test's, docs/spring-boot*.md by the
 * auto-configuration's): every {@code ```java} block of the guides compiles, by {@link DocSnippets}'s
 * convention. A module's doc test is a class named {@code *SnippetsCompileTest} that names its guides' paths
 * in its source: {@link DocSnippetsCompileTest#everyGuideWithJavaCodeIsCompiledByADocTest} finds it by that.
 */
public final class GuideSnippets {
    private GuideSnippets() {
    }

    /** The repository's root directory, seen from the module the test runs in. */
    public static Path repositoryRoot() {
        return DocumentedTypesTest.repositoryRoot();
    }

    /** The guides (paths relative to the root) that {@code glob} (e.g. {@code "docs/spring-boot*.md"}) matches. */
    public static List<String> matching(String glob) {
        Path root = repositoryRoot();
        PathMatcher matcher = FileSystems.getDefault().getPathMatcher("glob:" + glob);
        try (Stream<Path> files = Files.walk(root.resolve("docs"), 1)) {
            return files.map(root::relativize).filter(matcher::matches).map(Path::toString).sorted()
                    .collect(Collectors.toList());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Compiles every {@code ```java} block of {@code guides} (relative to the root) against this test's class
     * path into {@code outputDir}; fails naming each block that does not compile at its Markdown line, a guide
     * that is missing, and a list with no java block at all (a broken extraction).
     */
    public static void assertEveryJavaBlockCompiles(List<String> guides, Path outputDir) {
        Path root = repositoryRoot();
        List<DocSnippets.Block> blocks = new ArrayList<>();
        for (String guide : guides) {
            Path file = root.resolve(guide);
            if (!Files.isRegularFile(file)) {
                fail("guide " + guide + " is missing: fix the doc test's list");
            }
            blocks.addAll(DocSnippets.blocks(file));
        }
        assertFalse(blocks.isEmpty(), "no java block in " + guides + ": is the extraction broken?");
        List<DocSnippets.Failure> failures = DocSnippets.compile(blocks, DocSnippets.testClassPath(), outputDir);
        if (!failures.isEmpty()) {
            fail("java blocks that do not compile (a fragment's undeclared names go in a"
                    + " <!-- snippet-context: ... --> comment right before its fence; see DocSnippets):\n  "
                    + failures.stream().map(f -> DocSnippets.relative(root, f.file()) + ":" + f.line() + ": "
                            + f.message()).collect(Collectors.joining("\n  ")));
        }
    }
}
