package io.reactiverdma.samples.common;

import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;

/**
 * The command-line skeleton every sample's main shares: parse, print usage on a bad command line (exit 2),
 * run, and turn a failure into one "NAME: FAILED: ..." line (exit 1). Failures of the types a sample calls
 * expected (typed exceptions whose message says it all) print only that message; anything else also
 * prints its stack trace, because it is a bug.
 */
public final class SampleMain {
    private SampleMain() {
    }

    /** A sample's body: runs the parsed options and returns the exit status. */
    @FunctionalInterface
    public interface Body<O> {
        int run(O options) throws Exception;
    }

    /**
     * Parses {@code args} with {@code parse} and runs {@code body}; returns the exit status: the body's, 1 when
     * it threw, 2 on a {@link UsageException} (printed with {@code usage}).
     *
     * @param name     the sample's name, the prefix of every line this prints
     * @param expected failure types printed without a stack trace ({@link DeviceAddress.NotFoundException}
     *                 and {@link UncheckedIOException} always are)
     */
    public static <O> int run(String name, String usage, String[] args, PrintStream err,
            Function<String[], O> parse, List<Class<? extends Exception>> expected, Body<O> body) {
        Objects.requireNonNull(body, "body");
        O options;
        try {
            options = parse.apply(args);
        } catch (UsageException e) {
            err.println(name + ": " + e.getMessage());
            err.println(usage);
            return 2;
        }
        try {
            return body.run(options);
        } catch (Exception e) {
            if (e instanceof DeviceAddress.NotFoundException || e instanceof UncheckedIOException
                    || e instanceof java.io.IOException || expected.stream().anyMatch(t -> t.isInstance(e))) {
                err.println(name + ": FAILED: " + e.getClass().getSimpleName() + ": " + e.getMessage());
            } else {
                err.println(name + ": FAILED: " + e);
                e.printStackTrace(err);
            }
            return 1;
        }
    }

    /** {@code main}'s end: flushes stdout and exits with {@code status}. */
    public static void exit(int status) {
        System.out.flush();
        System.exit(status);
    }
}
