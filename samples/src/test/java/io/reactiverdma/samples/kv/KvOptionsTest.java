package io.reactiverdma.samples.kv;

import io.reactiverdma.samples.common.UsageException;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class KvOptionsTest {
    @Test
    void modesAndDefaults() {
        KvOptions demo = KvOptions.parse("demo");
        assertEquals(KvOptions.Mode.DEMO, demo.mode());
        assertEquals(0, demo.port());
        assertEquals(KvOptions.DEFAULT_CLIENTS, demo.clients());
        KvOptions client = KvOptions.parse("client", "10.0.0.1", "--port", "9000", "put", "k", "-v-");
        assertEquals("10.0.0.1", client.host());
        assertEquals(9000, client.port());
        assertEquals(List.of("put", "k", "-v-"), client.command(), "a value may start with '-'");
        assertEquals(KvOptions.Mode.HELP, KvOptions.parse("client", "--help").mode());
        assertEquals(List.of("incr", "hits", "-3"), KvOptions.parse("client", "h", "incr", "hits", "-3").command());
    }

    @Test
    void aBadCommandLineSaysWhatIsWrong() {
        assertTrue(assertThrows(UsageException.class, () -> KvOptions.parse("client", "h")).getMessage()
                .contains("needs a command"));
        assertTrue(assertThrows(UsageException.class, () -> KvOptions.parse("client", "h", "get")).getMessage()
                .contains("wrong arguments for get"));
        assertTrue(assertThrows(UsageException.class, () -> KvOptions.parse("client", "h", "incr", "c", "x"))
                .getMessage().contains("needs a number"));
        assertTrue(assertThrows(UsageException.class, () -> KvOptions.parse("server", "--clients", "2"))
                .getMessage().contains("does not apply to server"));
        assertTrue(assertThrows(UsageException.class, () -> KvOptions.parse("demo", "--large-kb", "99999"))
                .getMessage().contains("--large-kb must be in"));
        assertThrows(UsageException.class, () -> KvOptions.parse("fly"));
        assertThrows(UsageException.class, () -> KvOptions.parse());
    }

    @Test
    void badUsageExitsWithTwoAndPrintsTheUsage() {
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int status = KeyValue.run(new String[] {"demo", "--bogus"}, new PrintStream(new ByteArrayOutputStream()),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        assertEquals(2, status);
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("unknown option --bogus"));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("usage: kv demo"));
    }
}
