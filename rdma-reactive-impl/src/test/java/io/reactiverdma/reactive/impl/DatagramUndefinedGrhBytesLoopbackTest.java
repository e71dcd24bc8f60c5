package io.reactiverdma.reactive.impl;

import io.reactiverdma.reactive.impl.loopback.LoopbackStack;

/**
 * {@link DatagramLoopbackTest} again with the first 20 bytes of every received GRH garbage that starts with
 * a 6, as a real NIC may leave them for RoCEv2 over IPv4 (they are undefined): senders, groups and replies
 * must still be read from the IPv4 header. Loopback only: rxe zeroes those bytes, so only the loopback can
 * show a receiver that trusts the first nibble.
 */
class DatagramUndefinedGrhBytesLoopbackTest extends DatagramLoopbackTest {
    @Override
    LoopbackStack newStack() {
        return LoopbackStack.builder().device("loopback0", "127.0.0.1", "10.77.0.1").undefinedGrhBytes(true).build();
    }
}
