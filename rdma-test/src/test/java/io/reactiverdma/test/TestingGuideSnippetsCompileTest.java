package io.reactiverdma.test;

import io.reactiverdma.reactive.docs.GuideSnippets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;

/**
 * Every {@code ```java} block of docs/testing.md compiles against what a user's test has with rdma-test: the
 * API, {@link LoopbackRdma}, JUnit 5 and reactor-test (this module's test class path).
 */
class TestingGuideSnippetsCompileTest {
    @Test
    void everyJavaBlockOfTheTestingGuideCompiles(@TempDir Path classes) {
        GuideSnippets.assertEveryJavaBlockCompiles(List.of("docs/testing.md"), classes);
    }
}
