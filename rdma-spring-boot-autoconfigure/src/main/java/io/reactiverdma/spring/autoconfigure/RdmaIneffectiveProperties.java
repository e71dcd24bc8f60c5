package io.reactiverdma.spring.autoconfigure;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.beans.BeanWrapper;
import org.springframework.beans.BeanWrapperImpl;

import java.beans.PropertyDescriptor;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;

/**
 * Properties that are set but change nothing: {@code backoff.*} without {@code idle-strategy=backoff},
 * {@code server.*} without {@code server.enabled=true}, and {@code server.shared-receive-queue-group} without a
 * shared receive queue. Logged once the context's singletons exist (also under lazy initialisation, and when
 * the application has its own client bean). Logged as warnings rather than failing the start: a
 * profile may well set them for another profile to switch on. "Set" means "bound to a value other than the
 * default", so every way of setting a property counts (files, command line, environment variables).
 */
final class RdmaIneffectiveProperties {
    private static final Log LOG = LogFactory.getLog(RdmaAutoConfiguration.class);

    private RdmaIneffectiveProperties() {
    }

    /** Logs each of {@link #find}'s findings as a warning. */
    static void warn(RdmaProperties properties) {
        find(properties).forEach(LOG::warn);
    }

    /** One sentence per group of properties that has no effect, naming them and why. */
    static List<String> find(RdmaProperties properties) {
        List<String> found = new ArrayList<>();
        idle("client", properties.getClient(), found);
        idle("datagram", properties.getDatagram(), found);
        if (properties.getServer().isEnabled()) {
            idle("server", properties.getServer(), found);
            RdmaProperties.Server server = properties.getServer();
            if (server.getSharedReceiveQueueDepth() == 0 && server.getSharedReceiveQueueGroup() != null
                    && !server.getSharedReceiveQueueGroup().isEmpty()) {
                found.add(RdmaProperties.PREFIX + ".server.shared-receive-queue-group set, but " + RdmaProperties.PREFIX
                        + ".server.shared-receive-queue-depth is 0 (no shared receive queue): it has no effect");
            }
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
