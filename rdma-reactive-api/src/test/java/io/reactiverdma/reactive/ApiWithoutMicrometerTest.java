package io.reactiverdma.reactive;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * Micrometer is optional in the API: the client, server and configuration classes load, reflect and configure
 * without it (Spring reflects over every bean class, the auto-configured RdmaClient's too), and only the
 * micrometer package needs it. Run in a class loader that hides io.micrometer.
 */
class ApiWithoutMicrometerTest {
    /** Defines the API's classes itself (so they link against it) and refuses every Micrometer class. */
    private static final class WithoutMicrometer extends ClassLoader {
        WithoutMicrometer() {
            super(ApiWithoutMicrometerTest.class.getClassLoader());
        }

        @Override
        protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
            if (name.startsWith("io.micrometer.")) {
                throw new ClassNotFoundException(name + " (hidden by the test)");
            }
            if (!name.startsWith("io.reactiverdma.reactive.")) {
                return super.loadClass(name, resolve);
            }
            synchronized (getClassLoadingLock(name)) {
                Class<?> c = findLoadedClass(name);
                if (c == null) {
                    try (InputStream in = getParent().getResourceAsStream(name.replace('.', '/') + ".class")) {
                        if (in == null) {
                            throw new ClassNotFoundException(name);
                        }
                        byte[] b = in.readAllBytes();
                        c = defineClass(name, b, 0, b.length);
                    } catch (IOException e) {
                        throw new ClassNotFoundException(name, e);
                    }
                }
                return c;
            }
        }
    }

    @Test
    void clientServerAndConfigurationNeedNoMicrometer() throws Exception {
        ClassLoader loader = new WithoutMicrometer();
        for (String name : new String[] {"RdmaClient", "DefaultRdmaClient", "RdmaServer", "DefaultRdmaServer",
                "RdmaTransportConfig", "RdmaMetricsRecorder", "RdmaConnectionObserver"}) {
            Class<?> c = Class.forName("io.reactiverdma.reactive." + name, true, loader);
            c.getDeclaredMethods(); // what Spring's bean introspection does: resolves every signature type
            c.getDeclaredFields();
        }
        Class<?> client = Class.forName("io.reactiverdma.reactive.RdmaClient", true, loader);
        Object c = client.getMethod("create").invoke(null);
        c = client.getMethod("host", String.class).invoke(c, "10.77.0.1");
        c = client.getMethod("metrics", boolean.class).invoke(c, true);
        Object config = client.getMethod("configuration").invoke(c);
        assertEquals(true, config.getClass().getMethod("metrics").invoke(config));
    }

    @Test
    void theMicrometerPackageDoesNeedIt() throws Exception {
        // The control: the loader really hides Micrometer, so the test above could have failed.
        Class<?> recorder = Class.forName("io.reactiverdma.reactive.micrometer.MicrometerRdmaRecorder", false,
                new WithoutMicrometer());
        assertThrows(NoClassDefFoundError.class, recorder::getDeclaredMethods);
    }
}
