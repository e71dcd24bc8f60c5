package io.reactiverdma.samples;

import io.reactiverdma.samples.bulk.BulkOptions;
import io.reactiverdma.samples.common.UsageException;
import io.reactiverdma.samples.echo.EchoOptions;
import io.reactiverdma.samples.feed.FeedOptions;
import io.reactiverdma.samples.kv.KvOptions;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The samples' command lines follow one set of rules (issue 24, review finding 11): {@code -p}/{@code --port}
 * wherever an option may stand, {@code -h} is help only where an option may stand (never a value), sizes take
 * the same suffixes everywhere, a number out of range is a usage error naming the argument, and every server
 * takes the engine's server options.
 */
class SampleCommandLinesTest {
    @Test
    void kvClientTakesTheShortPortFlagAfterHost() {
        KvOptions o = KvOptions.parse("client", "10.0.0.1", "-p", "9000", "get", "k");
        assertEquals(9000, o.port());
        assertEquals(List.of("get", "k"), o.command());
        assertEquals(9001, KvOptions.parse("client", "10.0.0.1", "get", "k", "-p", "9001").port());
    }

    @Test
    void dashHIsAValueWhereAValueIsExpected() {
        KvOptions put = KvOptions.parse("client", "h", "put", "k", "-h");
        assertEquals(KvOptions.Mode.CLIENT, put.mode());
        assertEquals(List.of("put", "k", "-h"), put.command());
        assertEquals(KvOptions.Mode.HELP, KvOptions.parse("client", "h", "-h").mode());
        assertEquals(KvOptions.Mode.HELP, KvOptions.parse("-h").mode());
        assertEquals(EchoOptions.Mode.HELP, EchoOptions.parse("server", "--help").mode());
        assertEquals(BulkOptions.Command.HELP, BulkOptions.parse("receive", "-h").command());
        assertTrue(FeedOptions.parse("demo", "-h").help());
    }

    @Test
    void sizesTakeTheSameSuffixesInEverySample() {
        assertEquals(64 << 10, EchoOptions.parse("client", "h", "-s", "64k").size());
        assertEquals(64 << 10, EchoOptions.parse("server", "--max-size", "64k").maxMessageSize());
        assertEquals(1 << 10, FeedOptions.parse("demo", "-s", "1k").size());
        assertEquals(64 << 10, BulkOptions.parse("send", "h", "--chunk", "64k").chunkSize());
        assertEquals(List.of("download", "k", "65536"),
                KvOptions.parse("client", "h", "download", "k", "64k").command());
    }

    @Test
    void aDownloadChunkOutOfRangeIsAUsageErrorNamingIt() {
        UsageException e = assertThrows(UsageException.class,
                () -> KvOptions.parse("client", "h", "download", "k", "99999999999"));
        assertTrue(e.getMessage().contains("CHUNK_BYTES") && e.getMessage().contains("99999999999"), e.getMessage());
        assertThrows(UsageException.class, () -> KvOptions.parse("client", "h", "download", "k", "0"));
    }

    @Test
    void everyServerTakesTheEnginesServerOptions() {
        String[] flags = {"--shared-receive-queue-depth", "512", "--max-connections", "100", "--accept-timeout-ms",
                "2000", "--idle-probe-interval-ms", "0"};
        var echo = EchoOptions.parse(concat("server", flags)).limits();
        var kv = KvOptions.parse(concat("server", flags)).limits();
        var bulk = BulkOptions.parse(concat("receive", flags)).limits();
        for (var l : List.of(echo, kv, bulk)) {
            assertEquals(512, l.sharedReceiveQueueDepth());
            assertEquals(100, l.maxConnections());
            assertEquals(Duration.ofSeconds(2), l.acceptTimeout());
            assertEquals(Duration.ZERO, l.idleProbeInterval());
            assertTrue(l.describe().contains("shared receive queue 512 buffers"), l.describe());
        }
        assertThrows(UsageException.class, () -> KvOptions.parse("client", "h", "--max-connections", "3", "get", "k"));
    }

    private static String[] concat(String first, String[] rest) {
        String[] all = new String[rest.length + 1];
        all[0] = first;
        System.arraycopy(rest, 0, all, 1, rest.length);
        return all;
    }
}
