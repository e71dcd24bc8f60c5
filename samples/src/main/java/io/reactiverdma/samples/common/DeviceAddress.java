package io.reactiverdma.samples.common;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.stream.Stream;

/**
 * Finds the address of a local RDMA device without any native code: rdma_cm addresses a device by an IP
 * address of its network interface. For each device in {@code /sys/class/infiniband} and each of its ports
 * whose {@code state} is ACTIVE, the netdev is {@code ports/N/gid_attrs/ndevs/0} (RoCE: the netdev of GID 0),
 * else one listed in {@code device/net} (InfiniBand: the IPoIB interface); the first such netdev with an
 * IPv4 address wins. Devices and ports are tried in name order.
 *
 * @param device  the RDMA device, for example {@code rxe0}
 * @param port    its port number
 * @param netdev  the network interface, for example {@code dummy0}
 * @param address the interface's IPv4 address
 */
public record DeviceAddress(String device, int port, String netdev, InetAddress address) {
    public static final Path SYSFS = Path.of("/sys/class/infiniband");

    /** Thrown when no RDMA device with an ACTIVE port and an IPv4 address on its netdev is found. */
    public static final class NotFoundException extends IllegalStateException {
        private static final long serialVersionUID = 1L;

        NotFoundException(String message) {
            super(message);
        }
    }

    /** The host string rdma_cm gets. */
    public String host() {
        return address.getHostAddress();
    }

    @Override
    public String toString() {
        return host() + " (" + device + " port " + port + ", netdev " + netdev + ")";
    }

    public static DeviceAddress find() {
        return find(SYSFS, DeviceAddress::ipv4Of);
    }

    /**
     * The address a sample listens on: {@code host} when the command line gave one, else the address of
     * {@link #find()}, which {@code log} is told about ("RDMA device rxe0 port 1 on netdev ..., address ...").
     *
     * @throws NotFoundException when {@code host} is null and no device is found
     */
    public static String hostOrFind(String host, Consumer<String> log) {
        Objects.requireNonNull(log, "log");
        if (host != null) {
            return host;
        }
        DeviceAddress d = find();
        log.accept("RDMA device " + d.device() + " port " + d.port() + " on netdev " + d.netdev() + ", address "
                + d.host());
        return d.host();
    }

    /** As {@link #find()}, on the sysfs tree at {@code root} and with {@code ipv4} giving a netdev's address. */
    public static DeviceAddress find(Path root, Function<String, Optional<InetAddress>> ipv4) {
        List<String> seen = new ArrayList<>();
        for (Path dev : sorted(root)) {
            for (Path port : sorted(dev.resolve("ports"))) {
                String where = dev.getFileName() + " port " + port.getFileName();
                String state = read(port.resolve("state")).orElse("?");
                if (!state.contains("ACTIVE")) {
                    seen.add(where + ": state " + state);
                    continue;
                }
                List<String> netdevs = new ArrayList<>();
                read(port.resolve("gid_attrs/ndevs/0")).ifPresent(netdevs::add);
                if (netdevs.isEmpty()) {
                    for (Path n : sorted(dev.resolve("device/net"))) {
                        netdevs.add(n.getFileName().toString());
                    }
                }
                if (netdevs.isEmpty()) {
                    seen.add(where + ": no netdev");
                    continue;
                }
                for (String netdev : netdevs) {
                    Optional<InetAddress> a = ipv4.apply(netdev);
                    if (a.isPresent()) {
                        return new DeviceAddress(dev.getFileName().toString(), portNumber(port), netdev, a.get());
                    }
                    seen.add(where + ": netdev " + netdev + " has no IPv4 address");
                }
            }
        }
        throw new NotFoundException("no RDMA device with an ACTIVE port and an IPv4 address on its netdev in "
                + root + (seen.isEmpty() ? " (no device at all)" : ": " + String.join("; ", seen))
                + ". Give the address with --host");
    }

    private static int portNumber(Path port) {
        try {
            return Integer.parseInt(port.getFileName().toString());
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    /** The first IPv4 address of the interface {@code netdev}, if it exists and has one. */
    public static Optional<InetAddress> ipv4Of(String netdev) {
        try {
            NetworkInterface nif = NetworkInterface.getByName(netdev);
            if (nif == null) {
                return Optional.empty();
            }
            return Collections.list(nif.getInetAddresses()).stream()
                    .filter(a -> a instanceof Inet4Address)
                    .findFirst();
        } catch (SocketException e) {
            return Optional.empty();
        }
    }

    private static List<Path> sorted(Path dir) {
        if (!Files.isDirectory(dir)) {
            return List.of();
        }
        try (Stream<Path> s = Files.list(dir)) {
            return s.sorted().toList();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list " + dir, e);
        }
    }

    /** A sysfs attribute, trimmed; empty when it is missing or unreadable (ndevs/N of an IB port is EINVAL). */
    private static Optional<String> read(Path file) {
        try {
            String s = Files.readString(file, StandardCharsets.US_ASCII).trim();
            return s.isEmpty() ? Optional.empty() : Optional.of(s);
        } catch (IOException | UncheckedIOException e) {
            return Optional.empty();
        }
    }
}
