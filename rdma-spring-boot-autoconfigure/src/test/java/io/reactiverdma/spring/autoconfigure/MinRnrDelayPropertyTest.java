package io.reactiverdma.spring.autoconfigure;

import io.reactiverdma.reactive.RdmaClient;
import io.reactiverdma.reactive.RdmaOption;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The minimum RNR NAK timer as a Spring user writes a delay ({@code min-rnr-delay: 1ms}), mapped to the IBA
 * code of the shortest delay not below it; the raw code ({@code min-rnr-timer}) still works.
 */
class MinRnrDelayPropertyTest {
    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(RdmaAutoConfiguration.class));

    /** Before: min-rnr-delay was no property; binding ignored it and the code stayed 12 ('expected 14 but was 12'). */
    @Test
    void aDelayBecomesTheCodeOfTheShortestDelayNotBelowIt() {
        assertCode("1ms", 14);       // 1.28 ms
        assertCode("640us", 12);     // exactly 0.64 ms
        assertCode("641us", 13);     // 0.96 ms
        assertCode("0s", 1);         // 0.01 ms, the shortest
        assertCode("491520us", 31);
        assertCode("500ms", 0);      // 655.36 ms, the longest, is code 0
        assertCode("655360us", 0);
    }

    @Test
    void theRawCodeStillWorks() {
        runner.withPropertyValues("reactive-rdma.client.min-rnr-timer=20").run(ctx -> assertThat(
                ctx.getBean(RdmaClient.class).configuration().option(RdmaOption.MIN_RNR_TIMER)).isEqualTo(20));
    }

    /**
     * Unset, the option is not set either, so that the engine's default applies: 12, or 26 on a server's
     * connections on a shared receive queue. Before: the property defaulted to 12 and always set it, so a
     * Spring server on an SRQ kept 0.64 ms ('expected not to contain MIN_RNR_TIMER').
     */
    @Test
    void unsetItLeavesTheEnginesDefault() {
        runner.run(ctx -> assertThat(ctx.getBean(RdmaClient.class).configuration().options())
                .doesNotContainKey(RdmaOption.MIN_RNR_TIMER));
    }

    @Test
    void aDelayLongerThanTheLongestCodeFailsNamingTheProperty() {
        runner.withPropertyValues("reactive-rdma.client.min-rnr-delay=1s").run(ctx -> {
            assertThat(ctx).hasFailed();
            assertThat(RdmaAutoConfigurationTest.findCause(ctx.getStartupFailure(),
                    InvalidConfigurationPropertyValueException.class).getName())
                    .isEqualTo("reactive-rdma.client.min-rnr-delay");
        });
    }

    @Test
    void aDelayAndAChangedCodeTogetherFailNamingBoth() {
        runner.withPropertyValues("reactive-rdma.server.enabled=false", "reactive-rdma.client.min-rnr-delay=1ms",
                "reactive-rdma.client.min-rnr-timer=20").run(ctx -> {
            assertThat(ctx).hasFailed();
            InvalidConfigurationPropertyValueException e = RdmaAutoConfigurationTest.findCause(
                    ctx.getStartupFailure(), InvalidConfigurationPropertyValueException.class);
            assertThat(e.getName()).isEqualTo("reactive-rdma.client.min-rnr-delay");
            assertThat(e.getMessage()).contains("reactive-rdma.client.min-rnr-timer");
        });
    }

    private void assertCode(String delay, int code) {
        runner.withPropertyValues("reactive-rdma.client.min-rnr-delay=" + delay).run(ctx -> assertThat(
                ctx.getBean(RdmaClient.class).configuration().option(RdmaOption.MIN_RNR_TIMER))
                .as(delay).isEqualTo(code));
    }
}
