package io.reactiverdma.spring.autoconfigure;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

/**
 * The RDMA devices' port states as the kernel shows them in sysfs ({@code /sys/class/infiniband/<device>/ports/
 * <n>/state}, e.g. {@code 4: ACTIVE}): what {@code ibv_devinfo} prints, read without loading rdma-core, so the
 * health indicator and the failure analyzer work whatever broke in the native stack.
 */
final class RdmaDevicePorts {
    static final Path SYSFS = Path.of("/sys/class/infiniband");

    private RdmaDevicePorts() {
    }

    /** Device name to (port number to state name: ACTIVE, DOWN, INIT, ARMED ...); empty when there is none. */
    static Map<String, Map<String, String>> read(Path root) {
        Map<String, Map<String, String>> devices = new TreeMap<>();
        if (!Files.isDirectory(root)) {
            return devices;
        }
        try (Stream<Path> devs = Files.list(root)) {
            for (Path dev : devs.toList()) {
                Map<String, String> ports = new TreeMap<>();
                Path portsDir = dev.resolve("ports");
                if (Files.isDirectory(portsDir)) {
                    try (Stream<Path> ps = Files.list(portsDir)) {
                        for (Path port : ps.toList()) {
                            ports.put(port.getFileName().toString(), stateOrUnreadable(port.resolve("state")));
                        }
                    } catch (IOException gone) {
                        // the device went between listing it and listing its ports
                        ports.put("?", "UNREADABLE (" + gone.getMessage() + ")");
                    }
                }
                devices.put(dev.getFileName().toString(), ports);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + root, e);
        }
        return devices;
    }

    /** Whether some port of some device is ACTIVE. */
    static boolean anyActive(Map<String, Map<String, String>> devices) {
        return devices.values().stream().anyMatch(ports -> ports.containsValue("ACTIVE"));
    }

    /**
     * The port's state, or "UNREADABLE (...)" when its file cannot be read: a device being removed keeps its
     * sysfs directory for a moment while reading its files fails with ENODEV ("No such device"); the other
     * devices are still reported.
     */
    private static String stateOrUnreadable(Path file) {
        try {
            return state(file);
        } catch (IOException e) {
            return "UNREADABLE (" + e.getMessage() + ")";
        }
    }

    private static String state(Path file) throws IOException {
        if (!Files.isReadable(file)) {
            return "UNKNOWN";
        }
        String s = Files.readString(file).trim(); // "4: ACTIVE"
        int colon = s.indexOf(':');
        return colon >= 0 ? s.substring(colon + 1).trim() : s;
    }
}
