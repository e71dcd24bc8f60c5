package io.reactiverdma.spring.autoconfigure;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Reading the devices' port states from sysfs while a device is being removed: the kernel keeps its directory
 * for a moment and a read of its files fails (ENODEV, "No such device"; seen on rxe when a device removal was
 * under way: the health endpoint answered 500). The other devices are still reported.
 */
class RdmaDevicePortsTest {
    @TempDir
    Path root;

    private void port(String device, String port, String state) throws IOException {
        Path dir = Files.createDirectories(root.resolve(device).resolve("ports").resolve(port));
        Files.writeString(dir.resolve("state"), state + "\n");
    }

    @Test
    void aDeviceWhosePortCannotBeReadIsReportedSoAndTheOthersStillAre() throws IOException {
        port("rxe0", "1", "4: ACTIVE");
        // a state "file" that cannot be read as one: reading it fails with an IOException, as ENODEV does
        Files.createDirectories(root.resolve("rxegone0").resolve("ports").resolve("1").resolve("state"));

        Map<String, Map<String, String>> devices = RdmaDevicePorts.read(root);

        assertThat(devices.get("rxe0")).containsEntry("1", "ACTIVE");
        assertThat(devices.get("rxegone0").get("1")).startsWith("UNREADABLE");
        assertThat(RdmaDevicePorts.anyActive(devices)).isTrue();
    }
}
