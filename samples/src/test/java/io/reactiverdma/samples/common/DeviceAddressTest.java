package io.reactiverdma.samples.common;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The sysfs walk on a fake /sys/class/infiniband tree (the real one is checked by EchoRxeTest). */
class DeviceAddressTest {
    @TempDir
    Path sys;

    private void port(String device, int port, String state, String ndev0) throws IOException {
        Path p = sys.resolve(device).resolve("ports").resolve(String.valueOf(port));
        Files.createDirectories(p.resolve("gid_attrs/ndevs"));
        Files.writeString(p.resolve("state"), state + "\n");
        if (ndev0 != null) {
            Files.writeString(p.resolve("gid_attrs/ndevs/0"), ndev0 + "\n");
        }
    }

    private static Function<String, Optional<InetAddress>> addresses(Map<String, String> byNetdev) {
        return n -> Optional.ofNullable(byNetdev.get(n)).map(a -> {
            try {
                return InetAddress.getByName(a);
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        });
    }

    @Test
    void roceDeviceWithAnActivePortGivesItsNetdevsAddress() throws IOException {
        port("rxe0", 1, "4: ACTIVE", "dummy0");
        DeviceAddress d = DeviceAddress.find(sys, addresses(Map.of("dummy0", "10.77.0.1")));
        assertEquals("rxe0", d.device());
        assertEquals(1, d.port());
        assertEquals("dummy0", d.netdev());
        assertEquals("10.77.0.1", d.host());
    }

    @Test
    void skipsPortsThatAreNotActiveAndNetdevsWithoutAddress() throws IOException {
        port("mlx5_0", 1, "1: DOWN", "eth0");
        port("mlx5_1", 1, "4: ACTIVE", "eth1");
        port("rxe0", 1, "4: ACTIVE", "dummy0");
        DeviceAddress d = DeviceAddress.find(sys, addresses(Map.of("eth0", "10.0.0.1", "dummy0", "10.77.0.1")));
        assertEquals("rxe0", d.device());
        assertEquals("10.77.0.1", d.host());
    }

    @Test
    void infinibandPortFallsBackToTheDevicesNetInterfaces() throws IOException {
        port("mlx4_0", 1, "4: ACTIVE", null); // ndevs/N is unreadable on an IB port
        Files.createDirectories(sys.resolve("mlx4_0/device/net/ib0"));
        DeviceAddress d = DeviceAddress.find(sys, addresses(Map.of("ib0", "192.168.7.3")));
        assertEquals("ib0", d.netdev());
        assertEquals("192.168.7.3", d.host());
    }

    @Test
    void nothingUsableIsATypedErrorThatSaysWhatWasSeen() throws IOException {
        DeviceAddress.NotFoundException none = assertThrows(DeviceAddress.NotFoundException.class,
                () -> DeviceAddress.find(sys.resolve("missing"), n -> Optional.empty()));
        assertTrue(none.getMessage().contains("no device at all"), none.getMessage());
        assertTrue(none.getMessage().contains("--host"), none.getMessage());

        port("rxe0", 1, "1: DOWN", "dummy0");
        port("rxe1", 1, "4: ACTIVE", "dummy1");
        DeviceAddress.NotFoundException e = assertThrows(DeviceAddress.NotFoundException.class,
                () -> DeviceAddress.find(sys, n -> Optional.empty()));
        assertTrue(e.getMessage().contains("rxe0 port 1: state 1: DOWN"), e.getMessage());
        assertTrue(e.getMessage().contains("rxe1 port 1: netdev dummy1 has no IPv4 address"), e.getMessage());
    }
}
