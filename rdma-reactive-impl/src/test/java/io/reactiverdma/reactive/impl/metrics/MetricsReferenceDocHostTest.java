package io.reactiverdma.reactive.impl.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.reactiverdma.reactive.OperationType;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * docs/metrics-reference.md against the meters {@link EngineMetrics} records (through MicrometerRdmaRecorder): the page's meter table names exactly the
 * meters the engine registers, each with its type, its tag keys and its base unit; every {@code op} tag value
 * is listed; and the page's "Reading a meter" snippet works.
 */
class MetricsReferenceDocHostTest {
    /** A table row: | `rdma.x` | type | tags | unit | what |. */
    private static final Pattern ROW = Pattern.compile("(?m)^\\| `(rdma\\.[\\w.]+)` \\|([^|]*)\\|([^|]*)\\|([^|]*)\\|");
    private static final Pattern CODE = Pattern.compile("`([^`]+)`");

    record Row(String type, Set<String> tags, String unit) {
    }

    @Test
    void tableMatchesTheRegisteredMeters() throws IOException {
        String page = page();
        Map<String, Row> documented = new TreeMap<>();
        Matcher m = ROW.matcher(page);
        while (m.find()) {
            Set<String> tags = new TreeSet<>();
            Matcher code = CODE.matcher(m.group(3));
            while (code.find()) {
                tags.add(code.group(1));
            }
            documented.put(m.group(1), new Row(m.group(2).trim(), tags, m.group(4).trim()));
        }

        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        EngineMetrics metrics = EngineMetricsHostTest.into(registry);
        metrics.completionError("RNR_RETRY_EXC_ERR"); // registers the device's meters, and this one on first use
        Map<String, Meter.Id> registered = new TreeMap<>();
        for (Meter meter : registry.getMeters()) {
            registered.putIfAbsent(meter.getId().getName(), meter.getId());
        }

        assertEquals(registered.keySet(), documented.keySet(), "meters in the engine vs in the page's table");
        for (Meter.Id id : registered.values()) {
            Row row = documented.get(id.getName());
            String type = id.getType().name().toLowerCase(Locale.ROOT).replace('_', ' ');
            assertEquals(type, row.type(), id.getName() + ": type");
            Set<String> tagKeys = new TreeSet<>();
            id.getTags().forEach(t -> tagKeys.add(t.getKey()));
            assertEquals(tagKeys, row.tags(), id.getName() + ": tag keys");
            if (id.getBaseUnit() != null) {
                assertTrue(row.unit().startsWith(id.getBaseUnit()), id.getName() + ": unit " + id.getBaseUnit()
                        + ", the page says " + row.unit());
            } else {
                assertEquals("", row.unit(), id.getName() + ": no unit");
            }
        }
        for (OperationType op : OperationType.values()) {
            assertTrue(page.contains("`" + op.tag() + "`"), "op tag value " + op.tag() + " is not listed");
        }
    }

    @Test
    void readingSnippetWorks() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        EngineMetrics metrics = EngineMetricsHostTest.into(registry);
        assertEquals(0, lostToRnr(registry), "no counter yet");
        metrics.completionError("RNR_RETRY_EXC_ERR");
        metrics.completed(OperationType.READ, true, false, 3_000, 4096);
        assertEquals(1, lostToRnr(registry));
        assertEquals(3.0, meanReadUs(registry), 1e-9);
    }

    // The snippet of "Reading a meter", split in two.
    static double lostToRnr(MeterRegistry registry) {
        Counter rnr = registry.find("rdma.completion.errors").tag("status", "RNR_RETRY_EXC_ERR").counter();
        double lostToRnr = rnr == null ? 0 : rnr.count();                      // null until the first one
        return lostToRnr;
    }

    static double meanReadUs(MeterRegistry registry) {
        Timer reads = registry.get("rdma.operation.latency").tag("op", "read").timer();
        double meanReadUs = reads.mean(TimeUnit.MICROSECONDS);
        return meanReadUs;
    }

    private static String page() throws IOException {
        Path module = Path.of(System.getProperty("basedir", System.getProperty("user.dir"))).toAbsolutePath();
        Path page = module.resolveSibling("docs").resolve("metrics-reference.md");
        if (!Files.isRegularFile(page)) {
            fail("no " + page);
        }
        return Files.readString(page);
    }
}
