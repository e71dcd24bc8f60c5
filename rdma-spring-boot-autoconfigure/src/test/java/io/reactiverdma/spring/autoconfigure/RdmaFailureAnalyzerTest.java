package io.reactiverdma.spring.autoconfigure;

import io.reactiverdma.reactive.RdmaException;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.BeanCreationException;
import org.springframework.boot.diagnostics.FailureAnalysis;

import static org.assertj.core.api.Assertions.assertThat;

/** Each RDMA start-up failure the engine reports becomes a description and the action that fixes it. */
class RdmaFailureAnalyzerTest {
    @ParameterizedTest(name = "{1}")
    @CsvSource(delimiter = '|', value = {
            // the engine's messages (RdmaNative, DeviceProbe, Failures, Providers, RdmaEngine)
            "RDMA is not usable here: cannot load libibverbs.so.1: rdma-core's libibverbs (Debian package libibverbs1) is not installed | user-space libraries | apt-get install libibverbs1",
            "RDMA is not usable here: no RDMA device found (is rdma_rxe loaded?) | has no RDMA device | rdma link add rxe0",
            "RDMA is not usable here: device rxe0 present but port 1 is DOWN (physical state DISABLED) | port is not ACTIVE | ip link set",
            "cannot register a 4194304-byte slab: ibv_reg_mr failed: errno 12: the usual cause is the locked-memory limit (ulimit -l) | locked-memory limit | LimitMEMLOCK=infinity",
            "no RDMA engine on the class path: add the rdma-reactive-impl module | engine is not on the class path | rdma-reactive-impl",
            "cannot listen on 127.0.0.1:7471: rdma_bind_addr failed: errno 19 | cannot listen on the configured address | reactive-rdma.server.host",
    })
    void eachKnownFailureGetsItsAction(String message, String description, String action) {
        BeanCreationException wrapped = new BeanCreationException("rdmaServer", "start failed", new RdmaException(message));
        FailureAnalysis a = new RdmaFailureAnalyzer().analyze(wrapped);
        assertThat(a).isNotNull();
        assertThat(a.getDescription()).startsWith("RDMA cannot be used: ").contains(description).contains(message);
        assertThat(a.getAction()).contains(action);
    }

    @Test
    void aCauseDeeperDownIsRecognisedAndAnUnknownFailureIsLeftToSpringBoot() {
        RdmaException deep = new RdmaException("cannot set up", new IllegalStateException("the locked-memory limit"));
        assertThat(new RdmaFailureAnalyzer().analyze(deep).getAction()).contains("ulimit -l unlimited");
        assertThat(new RdmaFailureAnalyzer().analyze(new RdmaException("something else"))).isNull();
        assertThat(new RdmaFailureAnalyzer().analyze(new IllegalStateException("not RDMA"))).isNull();
    }
}
