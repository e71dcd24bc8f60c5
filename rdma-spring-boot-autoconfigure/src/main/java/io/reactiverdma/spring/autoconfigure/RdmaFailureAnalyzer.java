package io.reactiverdma.spring.autoconfigure;

import io.reactiverdma.reactive.RdmaException;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

import java.util.List;

/**
 * Turns an {@link RdmaException} that stopped the application into Spring Boot's failure report: what is wrong
 * (libraries missing, no RDMA device, no ACTIVE port, locked-memory limit too low, no engine, an address no
 * device has) and the action to take. Registered in {@code META-INF/spring.factories}; an RDMA failure it does
 * not recognise is left to Spring Boot's default report.
 */
class RdmaFailureAnalyzer extends AbstractFailureAnalyzer<RdmaException> {

    /** A kind of failure: recognised by a fragment of the engine's message. */
    record Kind(String fragment, String description, String action) {
    }

    static final List<Kind> KINDS = List.of(
            new Kind("cannot load lib", "rdma-core's user-space libraries (libibverbs, librdmacm) are not installed",
                    "Install them: 'apt-get install libibverbs1 librdmacm1 ibverbs-providers' (Debian, Ubuntu) or "
                            + "'dnf install rdma-core libibverbs librdmacm' (Fedora, RHEL)."),
            new Kind("no RDMA device found", "this machine has no RDMA device",
                    "Use a machine with an RDMA NIC (load its driver, install ibverbs-providers, check "
                            + "'ibv_devices'), or create a Soft-RoCE device: 'modprobe rdma_rxe && rdma link add rxe0 "
                            + "type rxe netdev <interface>'. To start without RDMA, leave "
                            + "reactive-rdma.server.enabled unset."),
            new Kind("present but port", "the RDMA device's port is not ACTIVE",
                    "Bring the network interface under the device up ('ip link set <interface> up', check the "
                            + "link); on InfiniBand, run a subnet manager (opensm). 'ibv_devinfo' shows the port "
                            + "state."),
            new Kind("locked-memory limit", "the locked-memory limit (ulimit -l) is too low for registered memory",
                    "Raise it: 'ulimit -l unlimited', 'memlock' in /etc/security/limits.conf, "
                            + "LimitMEMLOCK=infinity for a systemd service, '--ulimit memlock=-1' for Docker."),
            new Kind("no RDMA engine on the class path", "the RDMA engine is not on the class path",
                    "Add io.reactiverdma:rdma-reactive-impl as a runtime dependency (see the README's dependency "
                            + "snippets)."),
            new Kind("cannot listen on", "the RDMA server cannot listen on the configured address",
                    "Set reactive-rdma.server.host to an IP address of an RDMA device's network interface ("
                            + "'rdma link show' names the interface, 'ip addr show <interface>' its address), not "
                            + "127.0.0.1, and reactive-rdma.server.port to a free port (0 picks one)."));

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, RdmaException cause) {
        String message = messages(cause);
        for (Kind k : KINDS) {
            if (message.contains(k.fragment())) {
                return new FailureAnalysis("RDMA cannot be used: " + k.description() + ".\n\n" + cause.getMessage(),
                        k.action(), cause);
            }
        }
        return null;
    }

    /** The messages of the exception and its causes: the engine wraps native failures. */
    private static String messages(Throwable t) {
        StringBuilder b = new StringBuilder();
        for (Throwable c = t; c != null && b.length() < 10_000; c = c.getCause() == c ? null : c.getCause()) {
            b.append(c.getMessage()).append('\n');
        }
        return b.toString();
    }
}
