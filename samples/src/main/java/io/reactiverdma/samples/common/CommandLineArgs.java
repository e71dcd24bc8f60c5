package io.reactiverdma.samples.common;

import java.util.Locale;
import java.util.Set;

/**
 * The option-value parsers the samples' command lines share. Each reads {@code args[i]} as the value of
 * {@code flag} and throws a {@link UsageException} naming the flag when it is missing or wrong.
 */
public final class CommandLineArgs {
    private CommandLineArgs() {
    }

    /**
     * True when {@code arg} asks for help ({@code -h} or {@code --help}). Parsers ask this only where an option
     * may stand, so a value that happens to be "-h" (a PUT value, say) is never taken for it.
     */
    public static boolean isHelp(String arg) {
        return arg.equals("-h") || arg.equals("--help");
    }

    /**
     * The value of {@code args[0]} among {@code choices}, by lower-case name; {@code what} names it in the
     * {@link UsageException} ("missing command (demo, receive or send)", "unknown mode 'x' (...)").
     */
    @SafeVarargs
    public static <E extends Enum<E>> E firstWord(String[] args, String what, E... choices) {
        java.util.List<String> names = java.util.Arrays.stream(choices).map(c -> c.name().toLowerCase(Locale.ROOT)).toList();
        String listed = names.size() == 1 ? names.get(0)
                : String.join(", ", names.subList(0, names.size() - 1)) + " or " + names.get(names.size() - 1);
        if (args.length == 0) {
            throw new UsageException("missing " + what + " (" + listed + ")");
        }
        int at = names.indexOf(args[0]);
        if (at < 0) {
            throw new UsageException("unknown " + what + " '" + args[0] + "' (" + listed + ")");
        }
        return choices[at];
    }

    /** A non-blank value that does not look like another option. */
    public static String stringArg(String[] args, int i, String flag) {
        if (i >= args.length || args[i].startsWith("-") || args[i].isBlank()) {
            throw new UsageException(flag + " needs a value");
        }
        return args[i];
    }

    /** A decimal integer in {@code min..max}. */
    public static int intArg(String[] args, int i, String flag, int min, int max) {
        return (int) longArg(args, i, flag, min, max);
    }

    /** A decimal integer in {@code min..max}. */
    public static long longArg(String[] args, int i, String flag, long min, long max) {
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
        return checkRange(flag, n, min, max);
    }

    /** A decimal number from 0 to 100 (a percentage). */
    public static double percentArg(String[] args, int i, String flag) {
        if (i >= args.length) {
            throw new UsageException(flag + " needs a value");
        }
        double p;
        try {
            p = Double.parseDouble(args[i]);
        } catch (NumberFormatException e) {
            throw new UsageException(flag + " needs a percentage, got '" + args[i] + "'");
        }
        if (!(p >= 0 && p <= 100)) {
            throw new UsageException(flag + " must be in 0..100, got " + args[i]);
        }
        return p;
    }

    /**
     * A size in bytes in {@code min..max}: a whole number with an optional binary suffix {@code k}, {@code m},
     * {@code g} or {@code t} (KiB, MiB, GiB, TiB; case and a trailing {@code b}/{@code ib} ignored), for
     * example {@code 4096}, {@code 64k}, {@code 1g}, {@code 1GiB}.
     */
    public static long sizeArg(String[] args, int i, String flag, long min, long max) {
        if (i >= args.length) {
            throw new UsageException(flag + " needs a value");
        }
        return checkRange(flag, parseSize(flag, args[i]), min, max);
    }

    /** The bytes {@code text} names (see {@link #sizeArg}); a {@link UsageException} naming {@code flag} if none. */
    public static long parseSize(String flag, String text) {
        String s = text.trim().toLowerCase(Locale.ROOT);
        if (s.endsWith("ib")) {
            s = s.substring(0, s.length() - 2);
        } else if (s.endsWith("b")) {
            s = s.substring(0, s.length() - 1);
        }
        int shift = 0;
        if (!s.isEmpty()) {
            switch (s.charAt(s.length() - 1)) {
                case 'k' -> shift = 10;
                case 'm' -> shift = 20;
                case 'g' -> shift = 30;
                case 't' -> shift = 40;
                default -> shift = -1;
            }
            if (shift > 0) {
                s = s.substring(0, s.length() - 1);
            } else {
                shift = 0;
            }
        }
        long n;
        try {
            n = Long.parseLong(s);
        } catch (NumberFormatException e) {
            throw new UsageException(flag + " needs a size such as 4096, 64k, 1m or 1g, got '" + text + "'");
        }
        if (n < 0 || (shift > 0 && n > (Long.MAX_VALUE >> shift))) {
            throw new UsageException(flag + " must be a size from 0 to 2^63-1 bytes, got '" + text + "'");
        }
        return n << shift;
    }

    /**
     * Throws a {@link UsageException} unless {@code flag} applies to {@code mode}, one of {@code modes};
     * {@code why} says what to use instead.
     */
    public static <E extends Enum<E>> void requireApplies(E mode, Set<E> modes, String flag, String why) {
        if (!modes.contains(mode)) {
            throw new UsageException(flag + " does not apply to " + mode.name().toLowerCase(Locale.ROOT) + " ("
                    + why + ")");
        }
    }

    private static long checkRange(String flag, long n, long min, long max) {
        if (n < min || n > max) {
            throw new UsageException(flag + " must be in " + min + ".." + max + ", got " + n);
        }
        return n;
    }
}
