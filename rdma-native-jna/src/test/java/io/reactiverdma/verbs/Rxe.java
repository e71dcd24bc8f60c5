package io.reactiverdma.verbs;

import io.reactiverdma.testsupport.RxeTestSupport;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Helpers for the device tests: open the rxe device, bring QPs up out of band the way ibv_rc_pingpong does
 * (exchange QPN, PSN and GID in-process), and wait for completions with a deadline so nothing hangs.
 */
final class Rxe {
    /** Upper bound of every wait: rxe under TCG emulation is slow, but never this slow. */
    static final Duration WAIT = Duration.ofSeconds(10);
    static final int PORT = 1;

    private Rxe() {
    }

    /** Fails the test (never skips) without a device; opens RXE_DEVICE or the first device. */
    static VerbsContext open() {
        RxeTestSupport.requireDevice();
        return VerbsDevice.open(RxeTestSupport.deviceName());
    }

    /** The RoCEv2 GID of the device's IPv4 address (::ffff:10.77.0.1 in the VM). */
    static GidEntry gid(VerbsContext ctx) {
        return ctx.findRoceV2Ipv4Gid(PORT).orElseThrow(() -> new AssertionError(
                "no RoCEv2 IPv4 GID on " + ctx.deviceName() + " port 1: " + ctx.queryGidTable(PORT)));
    }

    /** Defaults plus the port's active MTU as path MTU. */
    static QpAttributes attributes(VerbsContext ctx) {
        return new QpAttributes().portNum(PORT).pathMtu(ctx.queryPort(PORT).activeMtu());
    }

    static int randomPsn() {
        return ThreadLocalRandom.current().nextInt(0x1000000);
    }

    /** What one side tells the other out of band (ibv_rc_pingpong's "local address"). */
    record Endpoint(int qpn, int psn, Gid gid, int gidIndex) {
    }

    static Endpoint endpoint(QueuePair qp, GidEntry gid) {
        return new Endpoint(qp.qpNum(), randomPsn(), gid.gid(), gid.index());
    }

    /** RESET → INIT → RTR → RTS of an RC QP towards {@code remote}. */
    static void bringUp(QueuePair qp, Endpoint local, Endpoint remote, QpAttributes base) {
        qp.toInit(base);
        AddressHandleAttributes av = new AddressHandleAttributes().portNum(PORT).global(remote.gid(), local.gidIndex())
                .hopLimit(1);
        qp.toRtr(base.addressVector(av).destQpNum(remote.qpn()).rqPsn(remote.psn()));
        qp.toRts(base.sqPsn(local.psn()));
    }

    /** Connects two RC QPs of the same device to each other. */
    static void connect(VerbsContext ctx, QueuePair a, QueuePair b) {
        connect(ctx, a, attributes(ctx), b, attributes(ctx));
    }

    static void connect(VerbsContext ctx, QueuePair a, QpAttributes attrsA, QueuePair b, QpAttributes attrsB) {
        GidEntry gid = gid(ctx);
        Endpoint ea = endpoint(a, gid);
        Endpoint eb = endpoint(b, gid);
        bringUp(a, ea, eb, attrsA);
        bringUp(b, eb, ea, attrsB);
    }

    /** One completion copied out of the flyweight, for assertions. */
    record Wc(long wrId, WcStatus status, WcOpcode opcode, long byteLen, int immData, int wcFlags, int qpNum, int srcQp,
            int vendorErr, String text) {
        boolean hasImm() {
            return (wcFlags & WcFlags.WITH_IMM) != 0;
        }
    }

    /** Polls until {@code n} completions arrived or {@link #WAIT} passed (then fails, listing what came). */
    static List<Wc> await(CompletionQueue cq, int n) {
        WorkCompletions wcs = new WorkCompletions(Math.max(1, Math.min(n, 64)));
        List<Wc> got = new ArrayList<>();
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (got.size() < n) {
            int k = cq.poll(wcs);
            for (int i = 0; i < k; i++) {
                got.add(new Wc(wcs.wrId(i), wcs.status(i), wcs.opcode(i), wcs.byteLen(i), wcs.immData(i), wcs.wcFlags(i),
                        wcs.qpNum(i), wcs.srcQp(i), wcs.vendorErr(i), wcs.describe(i)));
            }
            if (k == 0) {
                if (System.nanoTime() - deadline > 0) {
                    fail("waited " + WAIT.toSeconds() + " s for " + n + " completions on " + cq + ", got " + got.size()
                            + ": " + got);
                }
                Thread.onSpinWait();
                try {
                    Thread.sleep(1);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new AssertionError(e);
                }
            }
        }
        return got;
    }

    /** Awaits one completion and checks it succeeded. */
    static Wc awaitSuccess(CompletionQueue cq) {
        Wc wc = await(cq, 1).get(0);
        assertEquals(WcStatus.SUCCESS, wc.status(), wc.text());
        return wc;
    }

    /** Asserts that no completion arrives within {@code millis}. */
    static void assertNoCompletion(CompletionQueue cq, long millis) throws InterruptedException {
        WorkCompletions wcs = new WorkCompletions(4);
        long end = System.nanoTime() + millis * 1_000_000;
        while (System.nanoTime() < end) {
            if (cq.poll(wcs) > 0) {
                fail("unexpected completion: " + wcs.describe(0));
            }
            Thread.sleep(5);
        }
    }

    /** Fills {@code length} bytes from {@code offset} with a pattern derived from {@code seed}. */
    static void fill(ByteBuffer b, int offset, int length, int seed) {
        for (int i = 0; i < length; i++) {
            b.put(offset + i, (byte) (seed * 31 + i * 7 + (i >> 8)));
        }
    }

    static byte[] bytes(ByteBuffer b, int offset, int length) {
        byte[] r = new byte[length];
        b.get(offset, r, 0, length);
        return r;
    }

    static byte[] pattern(int length, int seed) {
        ByteBuffer b = ByteBuffer.allocate(length);
        fill(b, 0, length, seed);
        return b.array();
    }

    static ByteBuffer direct(int size) {
        return ByteBuffer.allocateDirect(size).order(java.nio.ByteOrder.nativeOrder());
    }
}
