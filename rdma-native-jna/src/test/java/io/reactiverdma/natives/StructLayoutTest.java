package io.reactiverdma.natives;

import org.junit.jupiter.api.Test;
import org.opentest4j.TestAbortedException;

import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Checks every {@link NativeStruct} class of the verbs and rdma_cm bindings against the C headers installed
 * on this machine: generates a C program that prints {@code sizeof} of each struct and {@code offsetof} of
 * each {@link NativeField}, compiles it with gcc, runs it, and fails listing EVERY difference from the Java
 * constants. A host test: needs gcc and the -dev headers, no RDMA device.
 *
 * <p>Without gcc or the headers the test aborts with a loud message, except on CI ({@code CI=true}) where it
 * fails: a layout check that silently never runs is worse than none.
 */
class StructLayoutTest {
    private static final List<String> PACKAGES = List.of("io.reactiverdma.verbs", "io.reactiverdma.cm");
    private static final String PACKAGES_NEEDED = "Debian packages libibverbs-dev librdmacm-dev gcc "
            + "(apt-get install libibverbs-dev librdmacm-dev gcc)";

    /** One struct to check. */
    private record StructSpec(Class<?> type, String cType, String header, Integer size, Map<String, Integer> fields) {
    }

    @Test
    void everyNativeStructMatchesTheCHeaders() throws Exception {
        List<Class<?>> classes = annotatedClasses();
        assertFalse(classes.isEmpty(), "no @NativeStruct class found in " + PACKAGES + ": the scan is broken");

        List<String> problems = new ArrayList<>();
        List<StructSpec> specs = new ArrayList<>();
        for (Class<?> c : classes) {
            specs.add(spec(c, problems));
        }
        if (!problems.isEmpty()) {
            fail("malformed @NativeStruct classes:\n  " + String.join("\n  ", problems));
        }

        String gcc = findCompiler();
        Path dir = Files.createTempDirectory("struct-layout");
        try {
            List<String> mismatches = new ArrayList<>();
            Map<String, Long> measured = measure(gcc, dir, specs, mismatches);
            for (StructSpec s : specs) {
                compare(s, measured, mismatches);
            }
            if (!mismatches.isEmpty()) {
                fail(mismatches.size() + " layout mismatch(es) between the Java constants and the installed C headers:\n  "
                        + String.join("\n  ", mismatches));
            }
            System.out.println("StructLayoutTest: " + specs.size() + " structs, "
                    + specs.stream().mapToInt(s -> s.fields.size() + 1).sum() + " sizes/offsets match the C headers");
        } finally {
            try (Stream<Path> files = Files.walk(dir)) {
                files.sorted((a, b) -> b.getNameCount() - a.getNameCount()).forEach(p -> p.toFile().delete());
            }
        }
    }

    // ------------------------------------------------------------------------------------ class scanning
    /** Every class in the binding packages annotated with @NativeStruct, found on the class path. */
    static List<Class<?>> annotatedClasses() throws IOException, URISyntaxException, ClassNotFoundException {
        Set<String> names = new TreeSet<>();
        ClassLoader loader = StructLayoutTest.class.getClassLoader();
        for (String pkg : PACKAGES) {
            String path = pkg.replace('.', '/');
            Enumeration<URL> roots = loader.getResources(path);
            while (roots.hasMoreElements()) {
                URL url = roots.nextElement();
                if (url.getProtocol().equals("file")) {
                    Path root = Paths.get(url.toURI());
                    try (Stream<Path> files = Files.walk(root)) {
                        files.filter(p -> p.toString().endsWith(".class")).forEach(p -> {
                            String rel = root.relativize(p).toString().replace('/', '.').replace('\\', '.');
                            names.add(pkg + "." + rel.substring(0, rel.length() - ".class".length()));
                        });
                    }
                } else if (url.getProtocol().equals("jar")) {
                    String file = url.getPath().substring("file:".length(), url.getPath().indexOf('!'));
                    try (JarFile jar = new JarFile(java.net.URLDecoder.decode(file, StandardCharsets.UTF_8))) {
                        for (Enumeration<JarEntry> e = jar.entries(); e.hasMoreElements(); ) {
                            String n = e.nextElement().getName();
                            if (n.startsWith(path + "/") && n.endsWith(".class")) {
                                names.add(n.substring(0, n.length() - ".class".length()).replace('/', '.'));
                            }
                        }
                    }
                }
            }
        }
        List<Class<?>> result = new ArrayList<>();
        for (String n : names) {
            if (n.endsWith("package-info") || n.endsWith("module-info")) {
                continue;
            }
            Class<?> c = Class.forName(n, false, loader);
            if (c.isAnnotationPresent(NativeStruct.class)) {
                result.add(c);
            }
        }
        return result;
    }

    private static StructSpec spec(Class<?> c, List<String> problems) throws IllegalAccessException {
        NativeStruct ns = c.getAnnotation(NativeStruct.class);
        Integer size = null;
        Map<String, Integer> fields = new LinkedHashMap<>();
        try {
            Field f = c.getDeclaredField("SIZE");
            if (!isStaticFinalInt(f)) {
                problems.add(c.getName() + ": SIZE must be a static final int");
            } else {
                f.setAccessible(true);
                size = f.getInt(null);
            }
        } catch (NoSuchFieldException e) {
            problems.add(c.getName() + " (" + ns.value() + "): no SIZE constant");
        }
        for (Field f : c.getDeclaredFields()) {
            NativeField nf = f.getAnnotation(NativeField.class);
            if (nf == null) {
                if (f.getName().endsWith("_OFFSET") && isStaticFinalInt(f)) {
                    // an offset nobody checks: the check would pass vacuously for it
                    problems.add(c.getName() + "." + f.getName() + ": an offset constant without @NativeField");
                }
                continue;
            }
            if (!isStaticFinalInt(f)) {
                problems.add(c.getName() + "." + f.getName() + ": @NativeField must be on a static final int");
                continue;
            }
            f.setAccessible(true);
            String key = nf.value() + " (" + f.getName() + ")";
            fields.put(key, f.getInt(null));
        }
        if (fields.isEmpty()) {
            problems.add(c.getName() + " (" + ns.value() + "): no @NativeField constant");
        }
        if (ns.value().isBlank() || ns.header().isBlank()) {
            problems.add(c.getName() + ": @NativeStruct needs the C type and its header");
        }
        return new StructSpec(c, ns.value(), ns.header(), size, fields);
    }

    private static boolean isStaticFinalInt(Field f) {
        int m = f.getModifiers();
        return Modifier.isStatic(m) && Modifier.isFinal(m) && f.getType() == int.class;
    }

    // --------------------------------------------------------------------------------------- C compiler
    static String findCompiler() {
        String cc = System.getenv().getOrDefault("CC", "gcc");
        try {
            Process p = new ProcessBuilder(cc, "--version").redirectErrorStream(true).start();
            p.getInputStream().readAllBytes();
            if (p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0) {
                return cc;
            }
        } catch (IOException | InterruptedException e) {
            // fall through
        }
        return missing("no C compiler (" + cc + ") to check the struct layouts with");
    }

    private static <T> T missing(String what) {
        String message = "STRUCT LAYOUTS NOT CHECKED: " + what + ". Install the " + PACKAGES_NEEDED + ".";
        if ("true".equalsIgnoreCase(System.getenv("CI"))) {
            fail(message + " (CI=true: this check must run on CI)");
        }
        System.err.println("*** " + message + " ***");
        throw new TestAbortedException(message);
    }

    /** Compiles and runs the program; keys are "struct|SIZE" and "struct|designator (FIELD)". */
    private static Map<String, Long> measure(String gcc, Path dir, List<StructSpec> specs, List<String> mismatches)
            throws IOException, InterruptedException {
        Set<String> headers = new LinkedHashSet<>();
        specs.forEach(s -> headers.add(s.header));
        for (String h : headers) {
            Result r = compile(gcc, dir, "#include <" + h + ">\nint main(void) { return 0; }\n", "header");
            if (!r.ok) {
                if (r.output.contains("No such file or directory")) {
                    return missing("header <" + h + "> is not installed (" + firstLine(r.output) + ")");
                }
                fail("<" + h + "> does not compile on its own:\n" + r.output);
            }
        }
        // Whole program first; when it fails, struct by struct so every bad designator is reported.
        Result whole = compileAndRun(gcc, dir, program(specs, headers), "layout");
        if (whole.ok) {
            return parse(whole.output);
        }
        Map<String, Long> values = new LinkedHashMap<>();
        for (StructSpec s : specs) {
            Result one = compileAndRun(gcc, dir, program(List.of(s), List.of(s.header)), "layout1");
            if (one.ok) {
                values.putAll(parse(one.output));
                continue;
            }
            // Field by field, to name the bad designators.
            for (String key : s.fields.keySet()) {
                String designator = key.substring(0, key.indexOf(' '));
                String src = "#include <stddef.h>\n#include <" + s.header + ">\nint main(void) { return (int) offsetof("
                        + s.cType + ", " + designator + "); }\n";
                Result f = compile(gcc, dir, src, "field");
                if (!f.ok) {
                    mismatches.add(s.type.getSimpleName() + ": offsetof(" + s.cType + ", " + designator
                            + ") does not compile: " + firstError(f.output));
                }
            }
            Result sz = compile(gcc, dir, "#include <stddef.h>\n#include <" + s.header + ">\nint main(void) { return (int) sizeof("
                    + s.cType + "); }\n", "size");
            if (!sz.ok) {
                mismatches.add(s.type.getSimpleName() + ": sizeof(" + s.cType + ") does not compile: " + firstError(sz.output));
            }
        }
        return values;
    }

    private static String program(List<StructSpec> specs, Iterable<String> headers) {
        StringBuilder c = new StringBuilder("#include <stddef.h>\n#include <stdio.h>\n");
        for (String h : headers) {
            c.append("#include <").append(h).append(">\n");
        }
        c.append("int main(void) {\n");
        for (StructSpec s : specs) {
            c.append("    printf(\"%s|%zu\\n\", \"").append(s.cType).append("|SIZE\", sizeof(").append(s.cType).append("));\n");
            for (String key : s.fields.keySet()) {
                String designator = key.substring(0, key.indexOf(' '));
                c.append("    printf(\"%s|%zu\\n\", \"").append(s.cType).append('|').append(key).append("\", offsetof(")
                        .append(s.cType).append(", ").append(designator).append("));\n");
            }
        }
        return c.append("    return 0;\n}\n").toString();
    }

    private static Map<String, Long> parse(String output) {
        Map<String, Long> values = new LinkedHashMap<>();
        for (String line : output.split("\n")) {
            int bar = line.lastIndexOf('|');
            if (bar > 0) {
                values.put(line.substring(0, bar), Long.parseLong(line.substring(bar + 1).trim()));
            }
        }
        return values;
    }

    private static void compare(StructSpec s, Map<String, Long> measured, List<String> mismatches) {
        String name = s.type.getName().substring(s.type.getPackageName().length() + 1);
        Long size = measured.get(s.cType + "|SIZE");
        if (size != null && s.size != null && size.longValue() != s.size) {
            mismatches.add(name + ".SIZE = " + s.size + " but sizeof(" + s.cType + ") = " + size);
        }
        s.fields.forEach((key, javaValue) -> {
            Long c = measured.get(s.cType + "|" + key);
            String designator = key.substring(0, key.indexOf(' '));
            String field = key.substring(key.indexOf('(') + 1, key.length() - 1);
            if (c != null && c.longValue() != javaValue) {
                mismatches.add(name + "." + field + " = " + javaValue + " but offsetof(" + s.cType + ", " + designator
                        + ") = " + c);
            }
        });
    }

    record Result(boolean ok, String output) {
    }

    static Result compileAndRun(String gcc, Path dir, String source, String name)
            throws IOException, InterruptedException {
        Result r = compile(gcc, dir, source, name);
        if (!r.ok) {
            return r;
        }
        return run(List.of(dir.resolve(name).toString()));
    }

    static Result compile(String gcc, Path dir, String source, String name) throws IOException, InterruptedException {
        Path src = dir.resolve(name + ".c");
        Files.writeString(src, source);
        return run(List.of(gcc, "-std=gnu11", "-o", dir.resolve(name).toString(), src.toString()));
    }

    private static Result run(List<String> command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out;
        try (InputStream in = p.getInputStream()) {
            out = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        if (!p.waitFor(120, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            fail(String.join(" ", command) + " did not finish in 120 s");
        }
        return new Result(p.exitValue() == 0, out);
    }

    private static String firstLine(String s) {
        int nl = s.indexOf('\n');
        return nl < 0 ? s : s.substring(0, nl);
    }

    static String firstError(String s) {
        for (String line : s.split("\n")) {
            if (line.contains("error")) {
                return line.trim();
            }
        }
        return firstLine(s);
    }
}
