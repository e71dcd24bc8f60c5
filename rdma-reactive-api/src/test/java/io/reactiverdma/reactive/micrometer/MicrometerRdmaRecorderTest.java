package io.reactiverdma.reactive.micrometer;

import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.reactiverdma.reactive.InvalidRequestException;
import io.reactiverdma.reactive.OperationType;
import io.reactiverdma.reactive.RdmaMetricsRecorder.Outcome;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.util.Set;
import java.util.TreeSet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The Micrometer recorder: one per registry, device tags, the remote-address tag and its cap. */
class MicrometerRdmaRecorderTest {
    private static InetSocketAddress peer(int i) {
        return new InetSocketAddress("10.0.0." + i, 40000 + i);
    }

    @Test
    void oneRecorderPerRegistrySoGaugesAreShared() {
        SimpleMeterRegistry r = new SimpleMeterRegistry();
        MicrometerRdmaRecorder a = MicrometerRdmaRecorder.of(r);
        assertSame(a, MicrometerRdmaRecorder.of(r));
        a.connectionsChanged("rxe0", peer(1), 1);
        MicrometerRdmaRecorder.of(r).connectionsChanged("rxe0", peer(2), 1);
        assertEquals(2, r.get("rdma.connections").tag("device", "rxe0").gauge().value());
    }

    @Test
    void devicesAreTaggedAndThereIsNoRemoteTagUnlessAskedFor() {
        SimpleMeterRegistry r = new SimpleMeterRegistry();
        MicrometerRdmaRecorder rec = MicrometerRdmaRecorder.of(r);
        rec.recordOperation("rxe0", peer(1), OperationType.READ, Outcome.SUCCESS, 2_000, 64);
        rec.recordOperation("mlx5_0", peer(2), OperationType.READ, Outcome.ERROR, 0, 0);
        rec.recordPollBatch("mlx5_0", 4);
        assertEquals(1, r.get("rdma.operations").tags("device", "rxe0", "op", "read", "outcome", "success")
                .counter().count());
        assertEquals(64, r.get("rdma.bytes").tags("device", "rxe0", "op", "read").counter().count());
        assertEquals(1, r.get("rdma.operations").tags("device", "mlx5_0", "op", "read", "outcome", "error")
                .counter().count());
        assertEquals(0, r.get("rdma.bytes").tags("device", "mlx5_0", "op", "read").counter().count());
        assertEquals(4, r.get("rdma.poll.batch").tag("device", "mlx5_0").summary().totalAmount());
        for (Meter m : r.getMeters()) {
            assertNull(m.getId().getTag("remote"), m.getId().toString());
        }
    }

    @Test
    void remoteAddressTagsStopAtTheCapAndLaterPeersAreOther() {
        SimpleMeterRegistry r = new SimpleMeterRegistry();
        MicrometerRdmaRecorder rec = MicrometerRdmaRecorder.of(r, 2);
        for (int i = 1; i <= 50; i++) {
            rec.connectionsChanged("rxe0", peer(i), 1);
            rec.connectionsChanged("rxe0", new InetSocketAddress(peer(i).getAddress(), 50000), 1); // same IP, other port
        }
        rec.connectionsChanged("rxe0", null, 1);
        Set<String> remotes = new TreeSet<>();
        r.find("rdma.connections").gauges().forEach(g -> remotes.add(g.getId().getTag("remote")));
        assertEquals(Set.of("10.0.0.1", "10.0.0.2", MicrometerRdmaRecorder.OTHER, MicrometerRdmaRecorder.UNKNOWN),
                remotes, "two peers of their own, the rest under other");
        assertEquals(2, r.get("rdma.connections").tags("remote", "10.0.0.1").gauge().value());
        assertEquals(96, r.get("rdma.connections").tags("remote", MicrometerRdmaRecorder.OTHER).gauge().value());
        assertEquals(1, r.get("rdma.connections").tags("remote", MicrometerRdmaRecorder.UNKNOWN).gauge().value());
        rec.recordPollBatch("rxe0", 3);
        assertNull(r.get("rdma.poll.batch").summary().getId().getTag("remote"), "a poller has no peer");
        int meters = r.getMeters().size();
        rec.recordOperation("rxe0", peer(77), OperationType.SEND, Outcome.SUCCESS, 1, 1);
        assertEquals(meters, r.getMeters().size(), "a new peer beyond the cap adds no meter");
    }

    @Test
    void badCapsAndAConflictingCapAreRefusedNamingTheValue() {
        SimpleMeterRegistry r = new SimpleMeterRegistry();
        InvalidRequestException negative = assertThrows(InvalidRequestException.class,
                () -> MicrometerRdmaRecorder.of(r, -1));
        assertTrue(negative.getMessage().contains("maxRemoteAddressTags must be 0..10000, got -1"), negative.getMessage());
        assertThrows(InvalidRequestException.class,
                () -> MicrometerRdmaRecorder.of(r, MicrometerRdmaRecorder.MAX_REMOTE_ADDRESS_TAGS + 1));
        MicrometerRdmaRecorder.of(r, 5);
        InvalidRequestException conflict = assertThrows(InvalidRequestException.class, () -> MicrometerRdmaRecorder.of(r));
        assertTrue(conflict.getMessage().contains("maxRemoteAddressTags=5"), conflict.getMessage());
        assertThrows(NullPointerException.class, () -> MicrometerRdmaRecorder.of(null));
    }

    @Test
    void errorCountersAppearWithTheirFirstStatus() {
        SimpleMeterRegistry r = new SimpleMeterRegistry();
        MicrometerRdmaRecorder rec = MicrometerRdmaRecorder.of(r);
        rec.outstandingChanged("rxe0", peer(1), 3);
        assertNull(r.find("rdma.completion.errors").counter());
        rec.recordCompletionError("rxe0", peer(1), "RETRY_EXC_ERR");
        rec.recordCompletionError("rxe0", peer(1), "RETRY_EXC_ERR");
        assertEquals(2, r.get("rdma.completion.errors").tags("device", "rxe0", "status", "RETRY_EXC_ERR").counter()
                .count());
        assertEquals(3, r.get("rdma.outstanding").gauge().value());
    }
}
