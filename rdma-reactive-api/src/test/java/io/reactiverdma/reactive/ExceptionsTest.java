package io.reactiverdma.reactive;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** RdmaConnectException, RdmaCompletionException and the other typed errors. */
class ExceptionsTest {

    @Test
    void connectExceptionKeepsItsFieldsAndMessage() {
        RdmaConnectException e = new RdmaConnectException("rejected by 10.0.0.2:7471",
                ConnectionEvent.Type.REJECTED, 28, new byte[] {4, 5});
        assertEquals("rejected by 10.0.0.2:7471", e.getMessage());
        assertEquals(ConnectionEvent.Type.REJECTED, e.reason());
        assertEquals(28, e.status());
        assertArrayEquals(new byte[] {4, 5}, e.privateData());
        assertNull(e.getCause());
        assertInstanceOf(RdmaException.class, e);
        assertInstanceOf(RuntimeException.class, e);
    }

    @Test
    void connectExceptionCopiesPrivateDataInAndOut() {
        byte[] data = {4, 5, 6};
        RdmaConnectException e = new RdmaConnectException("m", ConnectionEvent.Type.REJECTED, 28, data);
        data[0] = 0;
        assertArrayEquals(new byte[] {4, 5, 6}, e.privateData());
        byte[] out = e.privateData();
        out[1] = 0;
        assertArrayEquals(new byte[] {4, 5, 6}, e.privateData());
        assertNotSame(e.privateData(), e.privateData());
    }

    @Test
    void connectExceptionNullPrivateDataIsEmptyAndReasonIsRequired() {
        RdmaConnectException e = new RdmaConnectException("timed out", ConnectionEvent.Type.UNREACHABLE, -110, null);
        assertEquals(0, e.privateData().length);
        assertEquals(-110, e.status());
        assertThrows(NullPointerException.class, () -> new RdmaConnectException("m", null, 0, null));
    }

    @Test
    void completionExceptionMessageNamesEverything() {
        RdmaCompletionException e = new RdmaCompletionException(OperationType.WRITE, 10, "REM_ACCESS_ERR", 0x88,
                "rkey 0x1234 at 0x7f00");
        assertEquals("WRITE failed: completion status REM_ACCESS_ERR (10), vendor error 0x88: rkey 0x1234 at 0x7f00",
                e.getMessage());
        assertEquals(OperationType.WRITE, e.operation());
        assertEquals(10, e.status());
        assertEquals("REM_ACCESS_ERR", e.statusName());
        assertEquals(0x88, e.vendorError());
        assertInstanceOf(RdmaException.class, e);
    }

    @Test
    void completionExceptionWithoutDetail() {
        String expected = "READ failed: completion status RNR_RETRY_EXC_ERR (13), vendor error 0x0";
        assertEquals(expected,
                new RdmaCompletionException(OperationType.READ, 13, "RNR_RETRY_EXC_ERR", 0, null).getMessage());
        assertEquals(expected,
                new RdmaCompletionException(OperationType.READ, 13, "RNR_RETRY_EXC_ERR", 0, "").getMessage());
    }

    @Test
    void completionExceptionVendorErrorIsUnsignedHex() {
        RdmaCompletionException e = new RdmaCompletionException(OperationType.COMPARE_AND_SWAP, 11,
                "REM_OP_ERR", -1, null);
        assertEquals("COMPARE_AND_SWAP failed: completion status REM_OP_ERR (11), vendor error 0xffffffff",
                e.getMessage());
        assertEquals(-1, e.vendorError());
    }

    @Test
    void invalidRequestExceptionKeepsReasonAndMessage() {
        InvalidRequestException e = new InvalidRequestException(InvalidRequestException.Reason.MESSAGE_TOO_LARGE,
                "9000 > 4096");
        assertEquals(InvalidRequestException.Reason.MESSAGE_TOO_LARGE, e.reason());
        assertEquals("9000 > 4096", e.getMessage());
        assertInstanceOf(RdmaException.class, e);
        assertThrows(NullPointerException.class, () -> new InvalidRequestException(null, "m"));
    }

    @Test
    void connectionClosedExceptionKeepsItsCause() {
        RdmaCompletionException cause = new RdmaCompletionException(OperationType.SEND, 5, "WR_FLUSH_ERR", 0, null);
        ConnectionClosedException e = new ConnectionClosedException("closed", cause);
        assertEquals("closed", e.getMessage());
        assertSame(cause, e.getCause());
        assertNull(new ConnectionClosedException("closed").getCause());
        assertInstanceOf(RdmaException.class, e);
        RdmaException base = new RdmaException("x", cause);
        assertSame(cause, base.getCause());
    }

    @Test
    void operationTagsAreTheDocumentedShortNames() {
        assertEquals("send", OperationType.SEND.tag());
        assertEquals("send_imm", OperationType.SEND_WITH_IMMEDIATE.tag());
        assertEquals("recv", OperationType.RECEIVE.tag());
        assertEquals("write", OperationType.WRITE.tag());
        assertEquals("write_imm", OperationType.WRITE_WITH_IMMEDIATE.tag());
        assertEquals("read", OperationType.READ.tag());
        assertEquals("cas", OperationType.COMPARE_AND_SWAP.tag());
        assertEquals("faa", OperationType.FETCH_AND_ADD.tag());
        assertEquals("credit", OperationType.CREDIT_UPDATE.tag());
        assertEquals(11, OperationType.values().length);
    }
}
