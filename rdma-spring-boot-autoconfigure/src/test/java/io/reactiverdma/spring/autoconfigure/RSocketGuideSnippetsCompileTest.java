package io.reactiverdma.spring.autoconfigure;

import io.reactiverdma.reactive.docs.GuideSnippets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;

/**
 * Every {@code ```java} block of docs/rsocket.md compiles. It is tested here, not in rdma-rsocket, because the
 * guide shows both the plain transport and its use from Spring Boot (an {@code RSocketRequester} over RDMA):
 * this module's test class path has the API, rdma-rsocket, rsocket-core and Spring's RSocket support.
 */
class RSocketGuideSnippetsCompileTest {
    @Test
    void everyJavaBlockOfTheRSocketGuideCompiles(@TempDir Path classes) {
        GuideSnippets.assertEveryJavaBlockCompiles(List.of("docs/rsocket.md"), classes);
    }
}
