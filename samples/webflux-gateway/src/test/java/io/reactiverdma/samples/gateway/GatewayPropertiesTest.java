package io.reactiverdma.samples.gateway;

import org.junit.jupiter.api.Test;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Configuration;
import org.springframework.util.unit.DataSize;

import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.RecordComponent;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The gateway's own properties (issue 24, review finding 12d): each one is in the configuration metadata an
 * IDE reads, with its description and default, and a value the gateway cannot serve fails the start instead
 * of every request.
 */
class GatewayPropertiesTest {
    @Configuration(proxyBeanMethods = false)
    @EnableConfigurationProperties(GatewayProperties.class)
    static class Properties {
    }

    private final ApplicationContextRunner runner = new ApplicationContextRunner().withUserConfiguration(Properties.class);

    /** Before: the module ran no configuration processor, so the metadata had no gateway.* property at all. */
    @Test
    void everyGatewayPropertyIsInTheMetadataWithItsDescription() throws IOException {
        String metadata = gatewayMetadata();
        List<String> missing = new ArrayList<>();
        for (RecordComponent c : GatewayProperties.class.getRecordComponents()) {
            String name = "gateway." + kebab(c.getName());
            int at = metadata.indexOf("\"name\": \"" + name + "\"");
            if (at < 0) {
                missing.add(name);
                continue;
            }
            int next = metadata.indexOf("\"name\": ", at + 1);
            String entry = metadata.substring(at, next < 0 ? metadata.length() : next);
            if (!entry.contains("\"description\"") || !entry.contains("\"defaultValue\"")) {
                missing.add(name + " (no description or default: " + entry + ")");
            }
        }
        assertThat(missing).as("gateway properties without metadata").isEmpty();
    }

    /**
     * Before: 8MB passed start-up (bound 2GB) and every streamed download then answered 400, blaming the
     * HTTP client, because the key-value client refuses chunks over the engine's largest buffer.
     */
    @Test
    void aDownloadChunkOverTheEnginesLargestBufferFailsTheStart() {
        runner.withPropertyValues("gateway.download-chunk-size=8MB").run(ctx -> {
            assertThat(ctx).hasFailed();
            assertThat(rootMessage(ctx.getStartupFailure())).contains("gateway.download-chunk-size")
                    .contains("got 8388608B");
        });
        runner.withPropertyValues("gateway.download-chunk-size=4MB").run(ctx ->
                assertThat(ctx.getBean(GatewayProperties.class).downloadChunkSize()).isEqualTo(DataSize.ofMegabytes(4)));
    }

    private static String rootMessage(Throwable t) {
        StringBuilder all = new StringBuilder();
        for (Throwable c = t; c != null; c = c.getCause()) {
            all.append(c.getMessage()).append(" / ");
        }
        return all.toString();
    }

    private static String kebab(String camel) {
        return camel.replaceAll("([a-z])([A-Z])", "$1-$2").toLowerCase(java.util.Locale.ROOT);
    }

    /** The metadata file of this module (others on the class path describe other prefixes). */
    private static String gatewayMetadata() throws IOException {
        StringBuilder found = new StringBuilder();
        for (URL u : Collections.list(GatewayPropertiesTest.class.getClassLoader()
                .getResources("META-INF/spring-configuration-metadata.json"))) {
            try (InputStream in = u.openStream()) {
                String text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
                if (text.contains("\"gateway.")) {
                    found.append(text);
                }
            }
        }
        return found.toString();
    }
}
