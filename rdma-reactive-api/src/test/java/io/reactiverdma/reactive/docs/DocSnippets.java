package io.reactiverdma.reactive.docs;

import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.SimpleJavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Extracts the {@code ```java} blocks of Markdown files and compiles them against the test class path, so a
 * guide's code cannot silently stop compiling. The convention a block follows (also stated in docs/README.md):
 * <ul>
 *   <li>A block with a {@code package} or {@code import} line, or a top-level type declaration, is a whole
 *       source file and is compiled as it is.</li>
 *   <li>Any other block is a fragment: statements, compiled as the body of a method (that may throw) of an
 *       abstract class that imports {@link #PRELUDE}. The names a fragment uses but does not declare (the
 *       connection {@code conn}, a helper {@code process(..)}) are declared in an HTML comment on the line(s)
 *       right before the fence, invisible on the rendered page:
 *       {@code <!-- snippet-context: RdmaConnection conn; abstract Mono<Void> process(byte[] p); -->}.
 *       Its declarations, separated by {@code ;}, become members of the class (fields, abstract methods,
 *       nested types), except {@code import ...} ones, which join the imports, and the word {@code members},
 *       which makes the fragment the class's members (a {@code @Bean} method, nested types) instead of a
 *       method's statements.</li>
 *   <li>A whole file without a {@code package} line takes the context's {@code import ...} declarations too.</li>
 * </ul>
 * Errors are reported with the Markdown file and line they come from.
 */
final class DocSnippets {
    /** The imports every fragment gets. */
    static final List<String> PRELUDE = List.of(
            "io.reactiverdma.reactive.*",
            "io.reactiverdma.reactive.micrometer.*",
            "reactor.core.Disposable",
            "reactor.core.publisher.Flux",
            "reactor.core.publisher.Mono",
            "reactor.core.scheduler.Schedulers",
            "java.nio.ByteBuffer",
            "java.nio.ByteOrder",
            "java.nio.charset.StandardCharsets",
            "java.time.Duration",
            "java.net.InetSocketAddress",
            "static java.nio.charset.StandardCharsets.UTF_8");

    private static final Pattern FENCE = Pattern.compile("^(\\s*)(```+)\\s*(\\S*)(.*)$");
    private static final Pattern WHOLE_FILE = Pattern.compile(
            "(?m)^(package|import)\\s|^(public\\s+)?((final|abstract|sealed)\\s+)*(class|interface|record|enum)\\s+\\w+");
    private static final Pattern PUBLIC_TYPE = Pattern.compile(
            "(?m)^public\\s+((final|abstract|sealed)\\s+)*(class|interface|record|enum)\\s+(\\w+)");
    private static final Pattern PACKAGE = Pattern.compile("(?m)^package\\s+([\\w.]+)\\s*;");
    /** The context declaration that makes a fragment class members (methods, nested types) instead of statements. */
    static final String MEMBERS = "members";
    private static final Pattern CONTEXT = Pattern.compile("(?s)<!--\\s*snippet-context:(.*?)-->\\s*$");

    /** One {@code ```java} block: where it is, its code, and the context declared for it (empty: none). */
    record Block(Path file, int fenceLine, String code, String context, int contextLine) {
        boolean wholeFile() {
            return WHOLE_FILE.matcher(code).find();
        }
    }

    /** A block that did not compile, with the Markdown line of each error. */
    record Failure(Path file, int line, String message) {
        @Override
        public String toString() {
            return file + ":" + line + ": " + message;
        }
    }

    private DocSnippets() {
    }

    /** The {@code ```java} blocks of {@code file}, in order. */
    static List<Block> blocks(Path file) {
        List<String> lines;
        try {
            lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        List<Block> blocks = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            Matcher open = FENCE.matcher(lines.get(i));
            if (!open.matches()) {
                continue;
            }
            String indent = open.group(1);
            String fence = open.group(2);
            boolean java = open.group(3).equals("java");
            int start = i;
            StringBuilder code = new StringBuilder();
            for (i++; i < lines.size(); i++) {
                String line = lines.get(i);
                if (line.strip().startsWith(fence) && line.strip().replace("`", "").isEmpty()) {
                    break;
                }
                code.append(line.startsWith(indent) ? line.substring(indent.length()) : line.stripLeading()).append('\n');
            }
            if (java) {
                String[] context = contextBefore(lines, start);
                blocks.add(new Block(file, start + 1, code.toString(), context[0], Integer.parseInt(context[1])));
            }
        }
        return blocks;
    }

    /** The snippet-context comment ending on the line before the fence at {@code fence} (0-based): {text, line}. */
    private static String[] contextBefore(List<String> lines, int fence) {
        if (fence == 0 || !lines.get(fence - 1).strip().endsWith("-->")) {
            return new String[] {"", "0"};
        }
        for (int j = fence - 1; j >= 0 && fence - j <= 20; j--) {
            if (lines.get(j).contains("<!--")) {
                Matcher m = CONTEXT.matcher(String.join("\n", lines.subList(j, fence)));
                return m.find() ? new String[] {m.group(1).strip(), String.valueOf(j + 1)} : new String[] {"", "0"};
            }
        }
        return new String[] {"", "0"};
    }

    /** Compiles every block against {@code classPath}; returns what did not compile (empty: all did). */
    static List<Failure> compile(List<Block> blocks, String classPath, Path outputDir) {
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        if (javac == null) {
            throw new IllegalStateException("no Java compiler in this runtime (a JRE?): the doc snippets need a JDK");
        }
        List<Source> sources = new ArrayList<>();
        for (int n = 0; n < blocks.size(); n++) {
            sources.add(Source.of(blocks.get(n), n));
        }
        List<Failure> failures = new ArrayList<>();
        DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
        try (StandardJavaFileManager files = javac.getStandardFileManager(diagnostics, Locale.ROOT, StandardCharsets.UTF_8)) {
            List<String> options = List.of("-classpath", classPath, "-d", outputDir.toString(), "-proc:none",
                    "--release", "17", "-Xlint:none", "-nowarn");
            javac.getTask(null, files, diagnostics, options, null, sources).call();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        for (Diagnostic<? extends JavaFileObject> d : diagnostics.getDiagnostics()) {
            if (d.getKind() != Diagnostic.Kind.ERROR) {
                continue;
            }
            Source s = d.getSource() instanceof Source source ? source : null;
            if (s == null) {
                failures.add(new Failure(Path.of("?"), 0, d.getMessage(Locale.ROOT)));
                continue;
            }
            failures.add(new Failure(s.block.file(), s.markdownLine((int) d.getLineNumber()), d.getMessage(Locale.ROOT)));
        }
        return failures;
    }

    /** The class path the tests run with (Surefire's, when it hides it behind a manifest-only jar). */
    static String testClassPath() {
        String surefire = System.getProperty("surefire.test.class.path");
        return surefire != null && !surefire.isBlank() ? surefire : System.getProperty("java.class.path");
    }

    /** A block as a Java source file, and the way back from its lines to the Markdown's. */
    private static final class Source extends SimpleJavaFileObject {
        final Block block;
        final String text;
        /** Generated line (1-based) of the block's first line; context lines map to the comment. */
        final int firstCodeLine;
        final int contextStart;
        final int contextEnd;

        private Source(URI uri, Block block, String text, int firstCodeLine, int contextStart, int contextEnd) {
            super(uri, Kind.SOURCE);
            this.block = block;
            this.text = text;
            this.firstCodeLine = firstCodeLine;
            this.contextStart = contextStart;
            this.contextEnd = contextEnd;
        }

        static Source of(Block block, int n) {
            List<String> imports = new ArrayList<>();
            List<String> members = new ArrayList<>();
            boolean asMembers = false;
            for (String declaration : declarations(block.context())) {
                String d = declaration.strip();
                if (d.startsWith("import ")) {
                    imports.add(d + ";\n");
                } else if (d.equals(MEMBERS)) {
                    asMembers = true;
                } else if (!d.isEmpty()) {
                    members.add(d);
                }
            }
            if (block.wholeFile()) {
                Matcher type = PUBLIC_TYPE.matcher(block.code());
                Matcher pkg = PACKAGE.matcher(block.code());
                String name = type.find() ? type.group(4) : "Snippet" + n;
                boolean packaged = pkg.find();
                String dir = packaged ? pkg.group(1).replace('.', '/') + "/" : "";
                // A file without a package line may take its imports from the context (the guide shows the code).
                String head = packaged ? "" : String.join("", imports);
                return new Source(URI.create("string:///" + dir + name + ".java"), block, head + block.code(),
                        lines(head) + 1, 0, 0);
            }
            String name = "Snippet" + n;
            StringBuilder text = new StringBuilder("package docsnippets;\n");
            imports.forEach(text::append);
            for (String p : PRELUDE) {
                text.append("import ").append(p).append(";\n");
            }
            text.append("@SuppressWarnings(\"all\") abstract class ").append(name).append(" {\n");
            int contextStart = lines(text) + 1;
            for (String m : members) {
                text.append("    ").append(m).append(m.endsWith("}") ? "\n" : ";\n");
            }
            int contextEnd = lines(text);
            if (!asMembers) {
                text.append("    void snippet() throws Exception {\n");
            }
            int first = lines(text) + 1;
            text.append(block.code()).append(asMembers ? "}\n" : "    }\n}\n");
            return new Source(URI.create("string:///docsnippets/" + name + ".java"), block, text.toString(), first,
                    contextStart, contextEnd);
        }

        /** The context's declarations: split at each {@code ;} outside braces (a nested type keeps its body). */
        private static List<String> declarations(String context) {
            List<String> out = new ArrayList<>();
            int depth = 0;
            StringBuilder current = new StringBuilder();
            for (char c : context.toCharArray()) {
                depth += c == '{' ? 1 : c == '}' ? -1 : 0;
                if (c == ';' && depth == 0) {
                    out.add(current.toString());
                    current.setLength(0);
                } else {
                    current.append(c);
                }
            }
            out.add(current.toString());
            out.removeIf(d -> d.isBlank());
            return out;
        }

        private static int lines(CharSequence s) {
            return (int) s.chars().filter(c -> c == '\n').count();
        }

        /** The Markdown line of generated line {@code line}: in the block, else its context comment, else the fence. */
        int markdownLine(int line) {
            if (line >= firstCodeLine) {
                return block.fenceLine() + 1 + (line - firstCodeLine);
            }
            if (line >= contextStart && line <= contextEnd && block.contextLine() > 0) {
                return block.contextLine();
            }
            return block.fenceLine();
        }

        @Override
        public CharSequence getCharContent(boolean ignoreEncodingErrors) {
            return text;
        }
    }

    /** For messages: the path of {@code file} relative to {@code root} when it is inside it. */
    static String relative(Path root, Path file) {
        return file.startsWith(root) ? root.relativize(file).toString().replace(File.separatorChar, '/') : file.toString();
    }
}
