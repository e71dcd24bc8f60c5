package io.reactiverdma.spring.autoconfigure;

import io.reactiverdma.reactive.docs.GuideSnippets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every {@code ```java} block of the Spring guides (docs/spring-boot*.md: every one there is and will be)
 * compiles against the API, this module and Spring Boot (this module's test class path).
 */
class SpringGuideSnippetsCompileTest {
    @Test
    void everyJavaBlockOfTheSpringGuidesCompiles(@TempDir Path classes) {
        List<String> guides = GuideSnippets.matching("docs/spring-boot*.md");
        assertThat(guides).contains("docs/spring-boot.md");
        GuideSnippets.assertEveryJavaBlockCompiles(guides, classes);
    }
}
