package io.reactiverdma.reactive.impl.loopback;

import io.reactiverdma.reactive.impl.loopback.LoopbackCompletionQueue.Completion;
import io.reactiverdma.reactive.impl.verbs.MemoryWindow;
import io.reactiverdma.reactive.impl.verbs.Registration;
import io.reactiverdma.verbs.AccessFlags;
import io.reactiverdma.verbs.SendFlags;
import io.reactiverdma.verbs.SendWorkRequests;
import io.reactiverdma.verbs.WcOpcode;
import io.reactiverdma.verbs.WcStatus;
import io.reactiverdma.verbs.WrOpcode;
import io.reactiverdma.natives.NativeCallException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static io.reactiverdma.reactive.impl.loopback.LoopbackFixture.buffer;
import static io.reactiverdma.reactive.impl.loopback.LoopbackFixture.completions;
import static io.reactiverdma.reactive.impl.loopback.LoopbackFixture.register;
import static io.reactiverdma.reactive.impl.loopback.LoopbackFixture.send;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Type 2 memory windows on the loopback device, with rxe's rules: bound by a BIND_MW work request of the QP
 * they serve, under a new rkey with the same index; remote access only through that rkey, in the range and
 * access bound; invalidated by LOCAL_INV and by destroying the QP; the region cannot be deregistered while
 * a window is bound to it. (That another QP of the same PD cannot use the rkey is tested end to end by
 * {@code PeerIsolationLoopbackTest}.)
 */
@Timeout(30)
class LoopbackWindowTest {
    private static final int LW = AccessFlags.LOCAL_WRITE;
    private LoopbackFixture f;

    @AfterEach
    void close() {
        if (f != null) {
            f.close();
        }
    }

    private static Completion one(Completion c, long wrId, WcStatus status, WcOpcode opcode) {
        assertEquals(wrId, c.wrId(), "wr_id of " + c);
        assertEquals(status, WcStatus.of(c.status()), "status of " + c);
        assertEquals(opcode, WcOpcode.of(c.opcode()), "opcode of " + c);
        return c;
    }

    private int bind(MemoryWindow mw, Registration region, long offset, int length, int access, long wrId) {
        SendWorkRequests b = new SendWorkRequests(1, 0);
        int rkey = mw.writeBind(b, wrId, region, region.address() + offset, length, access);
        f.serverQp.postSend(b);
        return rkey;
    }

    private WcStatus write(Registration src, long address, int rkey, long wrId) {
        f.clientQp.postSend(send(wrId, WrOpcode.RDMA_WRITE, SendFlags.SIGNALED, src, 0, 8).rdma(0, address, rkey));
        return WcStatus.of(completions(f.clientCq, 1).get(0).status());
    }

    @Test
    void aBoundWindowGrantsItsRangeUnderItsNewRkeyUntilInvalidated() {
        f = LoopbackFixture.connected(LoopbackStack.create());
        Registration src = register(f.clientPd, 64, LW);
        buffer(src).putLong(0, 0x1122334455667788L);
        Registration region = register(f.serverPd, 256, LW | AccessFlags.MW_BIND); // no remote access itself
        MemoryWindow mw = f.serverPd.allocateWindow();
        int announced = mw.nextRkey();
        int rkey = bind(mw, region, 64, 8, AccessFlags.REMOTE_WRITE, 1);
        assertEquals(announced, rkey, "the rkey announced before the bind is the one it gives");
        one(completions(f.serverCq, 1).get(0), 1, WcStatus.SUCCESS, WcOpcode.BIND_MW);
        assertEquals(WcStatus.REM_ACCESS_ERR, write(src, region.address() + 64, region.rkey(), 2),
                "the region's own rkey grants nothing remotely");

        f.close();
        f = LoopbackFixture.connected(LoopbackStack.create());
        src = register(f.clientPd, 64, LW);
        buffer(src).putLong(0, 0x1122334455667788L);
        region = register(f.serverPd, 256, LW | AccessFlags.MW_BIND);
        mw = f.serverPd.allocateWindow();
        rkey = bind(mw, region, 64, 8, AccessFlags.REMOTE_WRITE, 1);
        one(completions(f.serverCq, 1).get(0), 1, WcStatus.SUCCESS, WcOpcode.BIND_MW);
        assertEquals(WcStatus.SUCCESS, write(src, region.address() + 64, rkey, 2));
        assertEquals(0x1122334455667788L, buffer(region).getLong(64));
        Registration bound = region;
        NativeCallException busy = assertThrows(NativeCallException.class, bound::deregister);
        assertEquals(Errnos.EINVAL, busy.errno(), "rxe refuses to deregister a region with a window bound");

        SendWorkRequests inv = new SendWorkRequests(1, 0);
        mw.writeInvalidate(inv, 3);
        f.serverQp.postSend(inv);
        one(completions(f.serverCq, 1).get(0), 3, WcStatus.SUCCESS, WcOpcode.LOCAL_INV);
        assertEquals(WcStatus.REM_ACCESS_ERR, write(src, region.address() + 64, rkey, 4), "invalidated");
        mw.deallocate();
        region.deregister();
    }

    @Test
    void bindChecksTheRegionAndDestroyingTheQpInvalidates() {
        f = LoopbackFixture.connected(LoopbackStack.create());
        Registration noBind = register(f.serverPd, 64, LW);
        MemoryWindow mw = f.serverPd.allocateWindow();
        bind(mw, noBind, 0, 8, AccessFlags.REMOTE_WRITE, 1);
        one(completions(f.serverCq, 1).get(0), 1, WcStatus.MW_BIND_ERR, WcOpcode.BIND_MW);

        f.close();
        f = LoopbackFixture.connected(LoopbackStack.create());
        Registration region = register(f.serverPd, 64, LW | AccessFlags.MW_BIND);
        LoopbackWindow w = (LoopbackWindow) f.serverPd.allocateWindow();
        int first = w.nextRkey();
        bind(w, region, 0, 64, AccessFlags.REMOTE_READ, 1);
        one(completions(f.serverCq, 1).get(0), 1, WcStatus.SUCCESS, WcOpcode.BIND_MW);
        assertNotEquals(first, w.nextRkey(), "every bind takes a new key");
        assertTrue(w.isBound());
        f.server.destroyQueuePair();
        assertFalse(w.isBound(), "a type 2 window dies with its QP");
        w.deallocate();
        assertEquals(0, f.stack.resources().count(LoopbackResources.Kind.MEMORY_WINDOW));
    }
}
