package io.reactiverdma.samples.echo;

import java.util.Locale;
import java.util.Set;

/**
 * Reading option values off a sample's command line, with a {@link UsageException} that names the flag
 * when a value is missing or out of range. Shared by the samples' option parsers.
 */
public final class OptionArgs {
    private OptionArgs() {
    }

    /** True when {@code -h} or {@code --help} is anywhere on the command line. */
    public static boolean wantsHelp(String[] args) {
        for (String a : args) {
            if (a.equals("-h") || a.equals("--help")) {
                return true;
            }
        }
        return false;
    }

    /** The mode named by {@code args[0]}: one of {@code modes}, by its lower-case name. */
    @SafeVarargs
    public static <M extends Enum<M>> M mode(String[] args, M... modes) {
        String names = String.join(", ", java.util.Arrays.stream(modes)
                .map(m -> m.name().toLowerCase(Locale.ROOT)).toList());
        if (args.length == 0) {
            throw new UsageException("missing mode (" + names + ")");
        }
        for (M m : modes) {
            if (m.name().toLowerCase(Locale.ROOT).equals(args[0])) {
                return m;
            }
        }
        throw new UsageException("unknown mode '" + args[0] + "' (" + names + ")");
    }

    /** Refuses {@code flag} in a mode not among {@code modes}, saying {@code why}. */
    public static <M extends Enum<M>> void only(M mode, String flag, Set<M> modes, String why) {
        if (!modes.contains(mode)) {
            throw new UsageException(flag + " does not apply to " + mode.name().toLowerCase(Locale.ROOT)
                    + " (" + why + ")");
        }
    }

    /** The value after {@code flag} at {@code args[i]}: present, not blank, not another flag. */
    public static String stringArg(String[] args, int i, String flag) {
        if (i >= args.length || args[i].startsWith("-") || args[i].isBlank()) {
            throw new UsageException(flag + " needs a value");
        }
        return args[i];
    }

    /** The number after {@code flag} at {@code args[i]}, in {@code min..max}. */
    public static int intArg(String[] args, int i, String flag, int min, int max) {
        if (i >= args.length) {
            throw new UsageException(flag + " needs a value");
        }
        String v = args[i];
        long n;
        try {
            n = Long.parseLong(v);
        } catch (NumberFormatException e) {
            throw new UsageException(flag + " needs a number, got '" + v + "'");
        }
        if (n < min || n > max) {
            throw new UsageException(flag + " must be in " + min + ".." + max + ", got " + n);
        }
        return (int) n;
    }
}
