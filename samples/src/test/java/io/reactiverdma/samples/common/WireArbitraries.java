package io.reactiverdma.samples.common;

import io.reactiverdma.reactive.RemoteRegion;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;

/** Generators for what the samples' messages carry, shared by their fuzzers. */
public final class WireArbitraries {
    private WireArbitraries() {
    }

    /** Valid remote regions: any rkey, addresses below 2^48 (user space), lengths up to 4 GiB. */
    public static Arbitrary<RemoteRegion> remoteRegions() {
        return Combinators.combine(Arbitraries.longs().between(0, 1L << 48), Arbitraries.longs().between(0, 1L << 32),
                Arbitraries.integers()).as(RemoteRegion::of);
    }
}
