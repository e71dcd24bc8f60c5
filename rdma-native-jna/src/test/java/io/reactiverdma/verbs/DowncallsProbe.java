package io.reactiverdma.verbs;

/**
 * Run in a child JVM by {@link DowncallSelectionTest} (system properties and JVM flags are fixed at start):
 * prints the data-path mechanism, then what opening a device does before any device is touched.
 */
public final class DowncallsProbe {
    private DowncallsProbe() {
    }

    public static void main(String[] args) {
        System.out.println("calls: " + Verbs.dataPathCalls());
        try {
            VerbsDevice.open("no-such-device-" + ProcessHandle.current().pid()).close();
            System.out.println("open: opened");
        } catch (RuntimeException e) {
            System.out.println("open: " + e.getClass().getSimpleName() + ": " + e.getMessage());
        }
    }
}
