package io.reactiverdma.reactive.impl;

import io.reactiverdma.reactive.impl.verbs.jna.JnaRdmaStack;
import io.reactiverdma.testsupport.RxeTestSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The SRQ attacks of {@link SharedReceiveAttackScenario} against a real server process on rxe: the echo
 * sample's server ({@code io.reactiverdma.samples.echo.Echo server}), started as a child JVM with a shared
 * receive queue of {@link SharedReceiveAttackScenario#SRQ_DEPTH} buffers from its command line, attacked by
 * raw-verbs peers (rdma-core through rdma-native-jna) that never send their hello and one that floods it
 * without credits, while an honest client's echo keeps working. The child's classpath is this test's (in the
 * VM: every module's classes, the samples' among them); the test fails, not skips, when the echo sample is
 * not on it.
 */
@Tag(RxeTestSupport.TAG)
class EchoServerUnderSrqAttackRxeTest {
    private static final Pattern LISTENING = Pattern.compile("echo server: listening on (\\S+):(\\d+), .*");

    private final PeerProcesses processes = new PeerProcesses();
    private SharedReceiveAttackScenario scenario;

    @AfterEach
    void close() {
        try {
            if (scenario != null) {
                scenario.close();
            }
        } finally {
            processes.close();
        }
    }

    /** This test's classpath: the JUnit launcher's class loader's (in the VM), else the JVM's. */
    private static String classpath() {
        StringBuilder cp = new StringBuilder();
        if (EchoServerUnderSrqAttackRxeTest.class.getClassLoader() instanceof java.net.URLClassLoader loader) {
            for (java.net.URL u : loader.getURLs()) {
                try {
                    cp.append(cp.length() == 0 ? "" : java.io.File.pathSeparator).append(Path.of(u.toURI()));
                } catch (java.net.URISyntaxException e) {
                    throw new IllegalStateException(e);
                }
            }
        }
        String jvm = System.getProperty("java.class.path");
        return cp.length() == 0 ? jvm : cp + java.io.File.pathSeparator + jvm;
    }

    @Test
    void silentAndUncreditedPeersCannotStopTheEchoServersHonestClients() throws Exception {
        String host = RxeResources.requireDevice();
        Process echo = processes.start(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED", "-XX:TieredStopAtLevel=1",
                "-cp", classpath(), "io.reactiverdma.samples.echo.Echo", "server",
                "--host", host, "--port", "0", "--max-size", String.valueOf(RawCreditPeer.BUFFER),
                "--shared-receive-queue-depth", String.valueOf(SharedReceiveAttackScenario.SRQ_DEPTH),
                "--max-connections", "64", "--accept-timeout-ms", "5000");
        BufferedReader out = new BufferedReader(new InputStreamReader(echo.getInputStream(), StandardCharsets.UTF_8));
        CompletableFuture<String> banner = CompletableFuture.supplyAsync(() -> {
            try {
                String line;
                while ((line = out.readLine()) != null) {
                    System.out.println("[echo] " + line);
                    if (LISTENING.matcher(line).matches()) {
                        return line;
                    }
                }
                return "the echo server exited";
            } catch (java.io.IOException e) {
                return e.toString();
            }
        });
        String line = banner.get(RxeResources.WAIT.toSeconds(), TimeUnit.SECONDS);
        Matcher m = LISTENING.matcher(line);
        assertTrue(m.matches(), "no listening banner: " + line);
        assertTrue(line.contains("shared receive queue 8 buffers, max connections 64, accept timeout 5000 ms"),
                "the banner says what the server chose: " + line);
        Thread drain = new Thread(() -> out.lines().forEach(l -> System.out.println("[echo] " + l)), "echo-output");
        drain.setDaemon(true);
        drain.start();
        scenario = new SharedReceiveAttackScenario(new RdmaEngine(), new JnaRdmaStack(), host, RxeResources.WAIT,
                Duration.ofSeconds(5));
        scenario.attackAnEchoServer(new InetSocketAddress(m.group(1), Integer.parseInt(m.group(2))));
        assertTrue(echo.isAlive(), "the echo server survived");
        List.of(echo).forEach(Process::destroy); // SIGTERM: its shutdown hook closes it
        assertTrue(echo.waitFor(60, TimeUnit.SECONDS), "the echo server stopped on SIGTERM");
    }
}
