package io.reactiverdma.spring.autoconfigure;

import io.reactiverdma.reactive.RdmaOption;
import io.reactiverdma.reactive.RdmaServer;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.beans.BeanWrapper;
import org.springframework.beans.BeanWrapperImpl;
import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;

import java.beans.PropertyDescriptor;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;

/**
 * Properties that are set but change nothing: {@code backoff.*} without {@code idle-strategy=backoff},
 * {@code server.*} without {@code server.enabled=true}, {@code server.shared-receive-queue-group} without a
 * shared receive queue, {@code rsocket.server.*} without {@code rsocket.server.port} (or with it, when the RSocket
 * server's auto-configuration did not apply), and the RDMA server's {@code enabled} and {@code drain-timeout} under
 * {@code rsocket.server}, which has neither: logged once the context's singletons exist (also under lazy
 * initialisation, and when the application has its own client bean). And a server's {@code accept-timeout} when
 * it has no acceptor: logged when the server is configured ({@link #warnForServer}). Logged as warnings rather than failing the start: a
 * profile may well set them for another profile to switch on. "Set" means "bound to a value other than the
 * default", so every way of setting a property counts (files, command line, environment variables).
 */
final class RdmaIneffectiveProperties {
    private static final Log LOG = LogFactory.getLog(RdmaAutoConfiguration.class);

    private RdmaIneffectiveProperties() {
    }

    /**
     * Logs each of {@link #find}'s and {@link #findRSocket}'s findings as a warning; {@code rsocketServerStarted}:
     * the RSocket server's auto-configuration applied.
     */
    static void warn(RdmaProperties properties, Binder binder, boolean rsocketServerStarted) {
        find(properties).forEach(LOG::warn);
        findRSocket(binder, rsocketServerStarted).forEach(LOG::warn);
    }

    /** One sentence per group of properties that has no effect, naming them and why. */
    static List<String> find(RdmaProperties properties) {
        List<String> found = new ArrayList<>();
        idle("client", properties.getClient(), found);
        idle("datagram", properties.getDatagram(), found);
        if (properties.getServer().isEnabled()) {
            listener("server", properties.getServer(), found);
        } else {
            Set<String> set = changed(properties.getServer(), new RdmaProperties.Server(), "");
            set.remove("enabled");
            if (!set.isEmpty()) {
                found.add(RdmaProperties.PREFIX + ".server." + set + " set, but " + RdmaProperties.PREFIX
                        + ".server.enabled is not true: no server is started, so they have no effect");
            }
        }
        return found;
    }

    /**
     * The same for {@code reactive-rdma.rsocket.server.*}, read from {@code binder} (the auto-configuration binds
     * them only when it applies); {@code started}: it applied. A value that does not bind is named, not thrown.
     */
    static List<String> findRSocket(Binder binder, boolean started) {
        String server = RdmaRSocketProperties.PREFIX + ".server";
        List<String> found = new ArrayList<>();
        RdmaRSocketProperties.Server bound;
        try {
            bound = binder.bindOrCreate(RdmaRSocketProperties.PREFIX, RdmaRSocketProperties.class).getServer();
        } catch (BindException e) {
            found.add((e.getProperty() != null ? e.getProperty().getName() : server) + " set to a value that does not "
                    + "bind" + (started ? "" : ", and no RSocket server over RDMA is started") + ": "
                    + org.springframework.core.NestedExceptionUtils.getMostSpecificCause(e).getMessage());
            return found;
        }
        if (started) {
            listener("rsocket.server", bound, found);
        } else if (binder.bind(server + ".port", Bindable.of(String.class)).isBound()) {
            found.add(server + ".port set, but no RSocket server over RDMA is started: its auto-configuration did not "
                    + "apply (it needs rdma-rsocket and Spring Boot's RSocket support, spring-boot-starter-rsocket, on "
                    + "the class path, and RdmaRSocketServerAutoConfiguration not excluded), so " + server
                    + ".* have no effect");
        } else {
            Set<String> set = changed(bound, new RdmaRSocketProperties.Server(), "");
            if (!set.isEmpty()) {
                found.add(server + "." + set + " set, but " + server + ".port is not set: no RSocket server over RDMA "
                        + "is started, so they have no effect");
            }
        }
        // The RDMA server's two properties the RSocket server does not have: nothing binds them, so say so.
        if (binder.bind(server + ".enabled", Bindable.of(String.class)).isBound()) {
            found.add(server + ".enabled set, but the RSocket server over RDMA has no such property: setting " + server
                    + ".port starts it");
        }
        if (binder.bind(server + ".drain-timeout", Bindable.of(String.class)).isBound()) {
            found.add(server + ".drain-timeout set, but the RSocket server over RDMA has no such property: it closes "
                    + "its connections at once on stop");
        }
        return found;
    }

    /** A started server's settings that change nothing: its idle strategy's, and a group without a shared queue. */
    private static void listener(String side, RdmaProperties.Listener server, List<String> found) {
        idle(side, server, found);
        if (server.getSharedReceiveQueueDepth() == 0 && server.getSharedReceiveQueueGroup() != null
                && !server.getSharedReceiveQueueGroup().isEmpty()) {
            found.add(RdmaProperties.PREFIX + "." + side + ".shared-receive-queue-group set, but "
                    + RdmaProperties.PREFIX + "." + side + ".shared-receive-queue-depth is 0 (no shared receive "
                    + "queue): it has no effect");
        }
    }

    /**
     * Logs {@link #findForServer}'s findings: called where the server is configured, since only the configured
     * server knows whether it has an acceptor.
     */
    static void warnForServer(String prefix, RdmaProperties.Listener properties, RdmaServer server) {
        findForServer(prefix, properties, server).forEach(LOG::warn);
    }

    /**
     * The server's properties under {@code prefix} that its final configuration makes moot: {@code accept-timeout}
     * (which bounds a ConnectionAcceptor's decision) on a server that has no acceptor.
     */
    static List<String> findForServer(String prefix, RdmaProperties.Listener properties, RdmaServer server) {
        List<String> found = new ArrayList<>();
        if (server.configuration().acceptor() == null
                && !Objects.equals(properties.getAcceptTimeout(), RdmaOption.ACCEPT_TIMEOUT.defaultValue())) {
            found.add(prefix + ".accept-timeout set, but the server has no ConnectionAcceptor (no bean, none set by "
                    + "an RdmaServerCustomizer): it bounds nothing, so it has no effect");
        }
        return found;
    }

    /** The idle strategy's settings that belong to another strategy than the one chosen. */
    private static void idle(String side, RdmaProperties.Endpoint e, List<String> found) {
        RdmaProperties.IdleStrategy strategy = e.getIdleStrategy();
        String chosen = strategy == null ? "unset" : strategy.name().toLowerCase(java.util.Locale.ROOT).replace('_', '-');
        if (strategy != RdmaProperties.IdleStrategy.EVENT_DRIVEN
                && e.getEventDrivenSpinPolls() != new RdmaProperties.Client().getEventDrivenSpinPolls()) {
            found.add(RdmaProperties.PREFIX + "." + side + ".event-driven-spin-polls set, but " + RdmaProperties.PREFIX
                    + "." + side + ".idle-strategy is " + chosen + ", not event-driven: it has no effect");
        }
        if (strategy == RdmaProperties.IdleStrategy.BACKOFF) {
            return;
        }
        Set<String> set = changed(e.getBackoff(), new RdmaProperties.Backoff(), "");
        if (!set.isEmpty()) {
            found.add(RdmaProperties.PREFIX + "." + side + ".backoff." + set + " set, but " + RdmaProperties.PREFIX
                    + "." + side + ".idle-strategy is " + chosen + ", not backoff: they have no effect");
        }
    }

    /** The (kebab-case) names of {@code bean}'s properties that differ from {@code defaults}', nested ones dotted. */
    private static Set<String> changed(Object bean, Object defaults, String prefix) {
        Set<String> names = new TreeSet<>();
        BeanWrapper actual = new BeanWrapperImpl(bean);
        BeanWrapper initial = new BeanWrapperImpl(defaults);
        for (PropertyDescriptor d : actual.getPropertyDescriptors()) {
            String name = d.getName();
            if (d.getReadMethod() == null || name.equals("class")
                    || d.getReadMethod().isAnnotationPresent(Deprecated.class)) { // named by its new name
                continue;
            }
            Object value = actual.getPropertyValue(name);
            Object initialValue = initial.getPropertyValue(name);
            if (value instanceof RdmaProperties.Backoff) {
                names.addAll(changed(value, initialValue, prefix + "backoff."));
            } else if (!Objects.equals(value, initialValue)) {
                names.add(prefix + kebab(name));
            }
        }
        return names;
    }

    private static String kebab(String camel) {
        return camel.replaceAll("([a-z])([A-Z])", "$1-$2").toLowerCase(java.util.Locale.ROOT);
    }
}
