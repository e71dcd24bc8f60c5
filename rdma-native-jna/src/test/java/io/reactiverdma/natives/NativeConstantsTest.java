package io.reactiverdma.natives;

import org.junit.jupiter.api.Test;

import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The hand-copied enum and flag constants of the bindings against the installed C headers (review finding
 * 12 of the native layer: the layout test checked offsets only). By convention a Java constant {@code NAME}
 * of a class below is the C constant {@code PREFIX + NAME}; an enum constant's number is its {@code value()}.
 * Compiles one C program with the host gcc (as {@link StructLayoutTest}; same rules when gcc is missing).
 */
class NativeConstantsTest {
    private static final String VERBS_H = "infiniband/verbs.h";
    private static final String CMA_H = "rdma/rdma_cma.h";

    /** A class of constants: where its C names come from and which Java names are not C constants. */
    record Group(String className, String prefix, List<String> headers, Set<String> notInC) {
    }

    private static final List<Group> GROUPS = List.of(
            new Group("io.reactiverdma.verbs.AccessFlags", "IBV_ACCESS_", List.of(VERBS_H), Set.of("ALL_REMOTE")),
            new Group("io.reactiverdma.verbs.SendFlags", "IBV_SEND_", List.of(VERBS_H), Set.of()),
            new Group("io.reactiverdma.verbs.WcFlags", "IBV_WC_", List.of(VERBS_H), Set.of()),
            new Group("io.reactiverdma.verbs.QpAttrMask", "IBV_QP_", List.of(VERBS_H),
                    Set.of("RC_INIT", "UD_INIT", "RC_RTR", "UC_RTR", "RC_RTS", "UD_RTS", "ALL")),
            new Group("io.reactiverdma.verbs.SrqAttrMask", "IBV_SRQ_", List.of(VERBS_H), Set.of()),
            new Group("io.reactiverdma.verbs.WrOpcode", "IBV_WR_", List.of(VERBS_H), Set.of()),
            new Group("io.reactiverdma.verbs.WcStatus", "IBV_WC_", List.of(VERBS_H), Set.of("UNKNOWN")),
            new Group("io.reactiverdma.verbs.WcOpcode", "IBV_WC_", List.of(VERBS_H), Set.of("UNKNOWN")),
            new Group("io.reactiverdma.verbs.QpState", "IBV_QPS_", List.of(VERBS_H), Set.of()),
            new Group("io.reactiverdma.verbs.QpType", "IBV_QPT_", List.of(VERBS_H), Set.of("UNKNOWN")),
            new Group("io.reactiverdma.verbs.Mtu", "IBV_", List.of(VERBS_H), Set.of("UNKNOWN")),
            new Group("io.reactiverdma.verbs.AsyncEventType", "IBV_EVENT_", List.of(VERBS_H), Set.of("UNKNOWN")),
            new Group("io.reactiverdma.cm.CmEventType", "RDMA_CM_EVENT_", List.of(CMA_H), Set.of("UNKNOWN")),
            new Group("io.reactiverdma.cm.PortSpace", "RDMA_PS_", List.of(CMA_H), Set.of("UNKNOWN")),
            new Group("io.reactiverdma.verbs.LibC", "",
                    List.of("fcntl.h", "poll.h", "sys/eventfd.h", "sys/resource.h"), Set.of()));

    @Test
    void everyEnumAndFlagConstantMatchesTheCHeaders() throws Exception {
        Map<String, Long> java = new LinkedHashMap<>();
        List<String> headers = new ArrayList<>();
        for (Group g : GROUPS) {
            Class<?> c = Class.forName(g.className());
            for (String h : g.headers()) {
                if (!headers.contains(h)) {
                    headers.add(h);
                }
            }
            if (c.isEnum()) {
                Method value = c.getMethod("value");
                for (Object e : c.getEnumConstants()) {
                    String name = ((Enum<?>) e).name();
                    if (!g.notInC().contains(name)) {
                        java.put(g.prefix() + name + "|" + c.getSimpleName() + "." + name,
                                ((Number) value.invoke(e)).longValue());
                    }
                }
            } else {
                for (Field f : c.getDeclaredFields()) {
                    int m = f.getModifiers();
                    if (!Modifier.isStatic(m) || !Modifier.isFinal(m) || g.notInC().contains(f.getName())
                            || !(f.getType() == int.class || f.getType() == short.class || f.getType() == long.class)) {
                        continue;
                    }
                    f.setAccessible(true);
                    java.put(g.prefix() + f.getName() + "|" + c.getSimpleName() + "." + f.getName(),
                            ((Number) f.get(null)).longValue());
                }
            }
        }
        assertFalse(java.isEmpty(), "no constant found: the scan is broken");
        String gcc = StructLayoutTest.findCompiler();
        Path dir = Files.createTempDirectory("constants");
        try {
            StringBuilder src = new StringBuilder("#include <stdio.h>\n");
            headers.forEach(h -> src.append("#include <").append(h).append(">\n"));
            src.append("int main(void) {\n");
            java.keySet().forEach(k -> {
                String cName = k.substring(0, k.indexOf('|'));
                src.append("    printf(\"").append(k).append("|%lld\\n\", (long long) (").append(cName).append("));\n");
            });
            src.append("    return 0;\n}\n");
            StructLayoutTest.Result r = StructLayoutTest.compileAndRun(gcc, dir, src.toString(), "constants");
            if (!r.ok()) {
                fail("the constants program does not compile (a Java name without its C constant?): "
                        + StructLayoutTest.firstError(r.output()) + "\n" + r.output());
            }
            List<String> mismatches = new ArrayList<>();
            for (String line : r.output().split("\n")) {
                int bar = line.lastIndexOf('|');
                if (bar < 0) {
                    continue;
                }
                String key = line.substring(0, bar);
                long c = Long.parseLong(line.substring(bar + 1).trim());
                long j = java.get(key);
                // flags are compared as the C int they are (OPTIONAL_RANGE and the like fill high bits)
                if (c != j && (int) c != (int) j) {
                    String[] parts = key.split("\\|");
                    mismatches.add(parts[1] + " = " + j + " but " + parts[0] + " = " + c);
                }
            }
            if (!mismatches.isEmpty()) {
                fail(mismatches.size() + " constant(s) differ from the C headers:\n  " + String.join("\n  ", mismatches));
            }
            System.out.println("NativeConstantsTest: " + java.size() + " constants match the C headers");
        } finally {
            try (var files = Files.walk(dir)) {
                files.sorted((a, b) -> b.getNameCount() - a.getNameCount()).forEach(p -> p.toFile().delete());
            }
        }
    }
}
