package io.reactiverdma.samples.common;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class CommandLineArgsTest {
    @Test
    void sizesTakeBinarySuffixes() {
        assertEquals(4096, CommandLineArgs.parseSize("--size", "4096"));
        assertEquals(64 << 10, CommandLineArgs.parseSize("--size", "64k"));
        assertEquals(100L << 20, CommandLineArgs.parseSize("--size", "100M"));
        assertEquals(1L << 30, CommandLineArgs.parseSize("--size", "1g"));
        assertEquals(1L << 30, CommandLineArgs.parseSize("--size", "1GiB"));
        assertEquals(2L << 40, CommandLineArgs.parseSize("--size", "2t"));
        assertEquals(512, CommandLineArgs.parseSize("--size", "512b"));
        assertEquals(0, CommandLineArgs.parseSize("--size", "0"));
    }

    @Test
    void badSizesNameTheFlag() {
        for (String bad : new String[] {"", "k", "1.5g", "-1", "12x", "9999999999t"}) {
            UsageException e = assertThrows(UsageException.class, () -> CommandLineArgs.parseSize("--chunk", bad), bad);
            assertTrue(e.getMessage().startsWith("--chunk "), e.getMessage());
        }
    }

    @Test
    void rangesAndMissingValuesAreUsageErrors() {
        String[] args = {"x", "5"};
        assertEquals(5, CommandLineArgs.intArg(args, 1, "-n", 1, 10));
        assertEquals("--window must be in 1..4, got 5",
                assertThrows(UsageException.class, () -> CommandLineArgs.intArg(args, 1, "--window", 1, 4)).getMessage());
        assertEquals("-n needs a value",
                assertThrows(UsageException.class, () -> CommandLineArgs.intArg(args, 2, "-n", 1, 4)).getMessage());
        assertEquals("--size must be in 0..4, got 5120",
                assertThrows(UsageException.class, () -> CommandLineArgs.sizeArg(new String[] {"5k"}, 0, "--size", 0, 4))
                        .getMessage());
        assertThrows(UsageException.class, () -> CommandLineArgs.stringArg(new String[] {"--x"}, 0, "--host"));
    }
}
