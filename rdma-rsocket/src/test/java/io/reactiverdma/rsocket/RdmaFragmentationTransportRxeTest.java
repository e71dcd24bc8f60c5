package io.reactiverdma.rsocket;

import org.junit.jupiter.api.Disabled;

/**
 * {@link RdmaTransportRxeTest} with RSocket fragmenting every frame above a random mtu of 256..511 bytes.
 * Disabled for now: it has never been run on rxe (the whole-frame suite took 17 minutes in the VM on a loaded
 * machine, and the fragmented one sends several times the messages), so its first run, and its time in CI,
 * belong to a run where it can be watched, not to a CI run that would fail on an unknown length. It passes on
 * the loopback device ({@code RdmaFragmentationTransportHostTest}).
 */
@Disabled("not yet run on rxe: first run and CI time to be measured (issue 21)")
class RdmaFragmentationTransportRxeTest extends RdmaTransportRxeTest {
    @Override
    boolean fragmented() {
        return true;
    }
}
