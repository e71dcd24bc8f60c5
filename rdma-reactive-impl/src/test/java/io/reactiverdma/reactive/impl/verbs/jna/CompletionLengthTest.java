package io.reactiverdma.reactive.impl.verbs.jna;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** A completion's u32 byte_len reaches the engine never negative (native-layer finding 11). */
class CompletionLengthTest {
    @Test
    void aLengthOf2GiBOrMoreSaturatesInsteadOfTurningNegative() {
        assertEquals(4096, JnaCompletionQueue.engineLength(4096));
        assertEquals(Integer.MAX_VALUE, JnaCompletionQueue.engineLength(Integer.MAX_VALUE));
        assertEquals(Integer.MAX_VALUE, JnaCompletionQueue.engineLength(1L << 31));
        assertEquals(Integer.MAX_VALUE, JnaCompletionQueue.engineLength(0xFFFF_FFFFL));
    }
}
