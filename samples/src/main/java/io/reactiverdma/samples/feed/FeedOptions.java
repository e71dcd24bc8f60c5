package io.reactiverdma.samples.feed;

import io.reactiverdma.samples.common.CommandLineArgs;
import io.reactiverdma.samples.common.UsageException;

/**
 * The feed sample's command line.
 *
 * @param count       ticks published
 * @param subscribers subscriber endpoints in this JVM
 * @param size        bytes per datagram (at least {@link Tick#SIZE})
 * @param window      sends in flight at once
 * @param group       the multicast group
 * @param host        the local address (null: the RDMA device's)
 * @param slowMicros  how long the last subscriber works on each tick (0: no slow subscriber)
 * @param maxLossPercent the loss (percent of the ticks published) above which a subscriber that is not the
 *                    slow one fails the run
 */
public record FeedOptions(boolean help, long count, int subscribers, int size, int window, String group, String host,
                          int slowMicros, double maxLossPercent) {
    public static final String USAGE = """
            usage: feed demo [-n TICKS] [--subscribers N] [-s SIZE] [--window W] [--group ADDR] [--host H] [--slow MICROS]
                     [--max-loss PERCENT]
              A market-data feed on one RDMA multicast group: a publisher endpoint and N subscriber endpoints in this
              JVM. Each tick carries a sequence number; each subscriber detects gaps, counts lost and reordered ticks
              and prints its rate. --slow makes the last subscriber spend MICROS on each tick: it falls behind, its receive
              buffers fill and the device drops what arrives meanwhile; its gap count shows it, the others lose nothing.
              Datagrams on the group that are not this run's ticks (another program's, another run's) are dropped
              and counted. Exit status 1 when a subscription failed or a subscriber other than the slow one lost
              more than --max-loss percent of the ticks.
              Defaults: -n 20000, --subscribers 2, -s 64, --window 16, --group 239.1.1.1, --slow 0, --max-loss 1.""";

    /** Parses {@code args}; throws {@link UsageException} naming what was wrong. */
    public static FeedOptions parse(String... args) {
        if (args.length > 0 && CommandLineArgs.isHelp(args[0])) {
            return helpOptions();
        }
        if (args.length == 0 || !args[0].equals("demo")) {
            throw new UsageException("missing command (demo)");
        }
        long count = 20_000;
        int subscribers = 2;
        int size = 64;
        int window = 16;
        String group = "239.1.1.1";
        String host = null;
        int slowMicros = 0;
        double maxLossPercent = 1;
        for (int i = 1; i < args.length; i += 2) {
            switch (args[i]) {
                case "-h", "--help" -> {
                    return helpOptions();
                }
                case "-n" -> count = CommandLineArgs.longArg(args, i + 1, "-n", 1, 100_000_000);
                case "--subscribers" -> subscribers = CommandLineArgs.intArg(args, i + 1, "--subscribers", 1, 16);
                case "-s", "--size" -> size = (int) CommandLineArgs.sizeArg(args, i + 1, args[i], Tick.SIZE, 4096);
                case "--window" -> window = CommandLineArgs.intArg(args, i + 1, "--window", 1, 1024);
                case "--group" -> group = CommandLineArgs.stringArg(args, i + 1, "--group");
                case "--host" -> host = CommandLineArgs.stringArg(args, i + 1, "--host");
                case "--slow" -> slowMicros = CommandLineArgs.intArg(args, i + 1, "--slow", 0, 1_000_000);
                case "--max-loss" -> maxLossPercent = CommandLineArgs.percentArg(args, i + 1, "--max-loss");
                default -> throw new UsageException("unknown option '" + args[i] + "'");
            }
        }
        return new FeedOptions(false, count, subscribers, size, window, group, host, slowMicros, maxLossPercent);
    }

    private static FeedOptions helpOptions() {
        return new FeedOptions(true, 0, 0, 0, 0, null, null, 0, 0);
    }
}
