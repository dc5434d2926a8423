package io.warden.it.docs;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The README's walk-through with curl as a user types it: the first {@code sh} block after the heading
 * {@value #HEADING}, cut at its step comments ({@code # 1. alice opens a session ...}). The lines before step 1 are
 * the setup ({@value #BASE_LINE} and a helper function); each step is its lines as written (commands and comments),
 * and the replies its comments show, one per command that prints something.
 *
 * <p>A shown reply is a comment that opens a JSON object ({@code #    201 {"session_id":...}}; what comes before the
 * brace, such as a status code or "(after 2 s)", is a note) and the comment lines that follow until its braces close.
 * Other comments of a step are prose. {@link ShownReply#matches(String)} says whether a real reply is the one shown.
 *
 * <p>{@link #parse(String)} refuses a README whose walk-through has another shape (no heading, no block, a step
 * without a command or a shown reply, steps out of order), naming what it found: a test built on it never passes
 * with nothing checked.
 */
record Walkthrough(List<String> setup, List<Step> steps) {
    static final String HEADING = "## A walk-through with curl";
    /** The setup's first line: where the walk-through's gateway is (the README's first command starts it there). */
    static final String BASE_LINE = "W=http://localhost:7070";

    private static final Pattern STEP = Pattern.compile("^# (\\d+)\\. (\\S.*)$");
    private static final Pattern COMMENT = Pattern.compile("^#\\s*(.*)$");

    Walkthrough {
        setup = List.copyOf(setup);
        steps = List.copyOf(steps);
    }

    /** One step: its number and title, the lines typed (as written), the replies its comments show in order. */
    record Step(int number, String title, List<String> lines, List<ShownReply> replies) {
        Step {
            lines = List.copyOf(lines);
            replies = List.copyOf(replies);
        }

        /** The step as typed: its lines, each ended by a newline. */
        String text() {
            return String.join("\n", lines) + "\n";
        }

        @Override
        public String toString() {
            return "step " + number + " (" + title + ")";
        }
    }

    /**
     * A reply as the README shows it. It matches a real reply that is the same text, except that "…" stands for any
     * text, and that the values the README says will differ — {@code session_id}, {@code token}, {@code revision} —
     * may be any id or number.
     */
    record ShownReply(String text) {
        private static final Pattern WILD =
                Pattern.compile("\"(session_id|token|revision)\":(\"[^\"]*\"|-?\\d+)|…");

        Pattern pattern() {
            StringBuilder regex = new StringBuilder();
            Matcher m = WILD.matcher(text);
            int last = 0;
            while (m.find()) {
                regex.append(Pattern.quote(text.substring(last, m.start())));
                if (m.group(1) == null) {
                    regex.append(".*?");
                } else {
                    regex.append(Pattern.quote("\"" + m.group(1) + "\":"))
                            .append(m.group(2).startsWith("\"") ? "\"[0-9a-f]+\"" : "\\d+");
                }
                last = m.end();
            }
            regex.append(Pattern.quote(text.substring(last)));
            return Pattern.compile(regex.toString());
        }

        boolean matches(String actual) {
            return pattern().matcher(actual).matches();
        }
    }

    /** The walk-through of a README's text; {@link IllegalArgumentException} naming what is off when it has another shape. */
    static Walkthrough parse(String readme) {
        List<String> block = block(readme.lines().toList());
        if (!block.get(0).equals(BASE_LINE)) {
            throw new IllegalArgumentException("the walk-through's block should start with " + BASE_LINE
                    + " (the test points it at its own gateway), but starts with: " + block.get(0));
        }
        List<String> setup = new ArrayList<>();
        List<Step> steps = new ArrayList<>();
        int i = 0;
        while (i < block.size() && !STEP.matcher(block.get(i)).matches()) {
            setup.add(block.get(i++));
        }
        while (i < block.size()) {
            Matcher header = STEP.matcher(block.get(i));
            header.matches(); // the loops stop only at step headers
            int number = Integer.parseInt(header.group(1));
            if (number != steps.size() + 1) {
                throw new IllegalArgumentException("the walk-through's steps should be numbered 1, 2, 3, ... in order;"
                        + " after " + steps.size() + " steps comes: " + block.get(i));
            }
            List<String> lines = new ArrayList<>(List.of(block.get(i++)));
            while (i < block.size() && !STEP.matcher(block.get(i)).matches()) {
                lines.add(block.get(i++));
            }
            steps.add(step(number, header.group(2), lines));
        }
        if (steps.isEmpty()) {
            throw new IllegalArgumentException("the walk-through's block has no step comment like '# 1. alice opens a"
                    + " session'");
        }
        return new Walkthrough(setup, steps);
    }

    /** The lines of the first sh block after the heading. */
    private static List<String> block(List<String> readme) {
        int heading = readme.indexOf(HEADING);
        if (heading < 0 || readme.lastIndexOf(HEADING) != heading) {
            throw new IllegalArgumentException("README.md should have the heading '" + HEADING + "' once; it has it "
                    + readme.stream().filter(HEADING::equals).count() + " times");
        }
        int open = heading + 1;
        while (open < readme.size() && !readme.get(open).startsWith("```")) {
            open++;
        }
        if (open == readme.size() || !readme.get(open).equals("```sh")) {
            throw new IllegalArgumentException("the first code block after '" + HEADING + "' should be a ```sh block;"
                    + " found " + (open == readme.size() ? "none" : readme.get(open)));
        }
        int close = open + 1;
        while (close < readme.size() && !readme.get(close).equals("```")) {
            close++;
        }
        if (close == readme.size()) {
            throw new IllegalArgumentException("the walk-through's ```sh block is not closed");
        }
        if (close == open + 1) {
            throw new IllegalArgumentException("the walk-through's ```sh block is empty");
        }
        return readme.subList(open + 1, close);
    }

    private static Step step(int number, String title, List<String> lines) {
        List<ShownReply> replies = new ArrayList<>();
        boolean commands = false;
        StringBuilder open = null; // a shown reply whose braces are not closed yet
        for (String line : lines.subList(1, lines.size())) {
            Matcher comment = COMMENT.matcher(line);
            if (!comment.matches()) {
                if (open != null) {
                    throw new IllegalArgumentException("step " + number + ": a shown reply does not close its braces"
                            + " before the command: " + line);
                }
                commands |= !line.isBlank();
                continue;
            }
            String text = comment.group(1).strip();
            if (open != null) {
                open.append(text);
            } else if (text.contains("{")) {
                open = new StringBuilder(text.substring(text.indexOf('{')));
            } else {
                continue; // prose
            }
            if (balanced(open)) {
                replies.add(new ShownReply(open.toString()));
                open = null;
            }
        }
        if (open != null) {
            throw new IllegalArgumentException("step " + number + ": a shown reply does not close its braces: " + open);
        }
        if (!commands) {
            throw new IllegalArgumentException("step " + number + " (" + title + ") has no command");
        }
        if (replies.isEmpty()) {
            throw new IllegalArgumentException("step " + number + " (" + title + ") shows no reply (a comment like"
                    + " '#    {\"released\":true}')");
        }
        return new Step(number, title, lines, replies);
    }

    /** Whether the braces and brackets of a shown reply (outside its strings) are all closed. */
    private static boolean balanced(CharSequence reply) {
        int depth = 0;
        boolean inString = false;
        for (int i = 0; i < reply.length(); i++) {
            char c = reply.charAt(i);
            if (c == '"') {
                inString = !inString;
            } else if (!inString && (c == '{' || c == '[')) {
                depth++;
            } else if (!inString && (c == '}' || c == ']')) {
                depth--;
            }
        }
        return depth == 0;
    }

    /** The setup as typed, with the gateway at {@code base} (e.g. {@code http://localhost:7071}) instead of 7070. */
    String setupText(String base) {
        List<String> typed = new ArrayList<>(setup);
        typed.set(0, "W=" + base);
        return String.join("\n", typed) + "\n";
    }
}
