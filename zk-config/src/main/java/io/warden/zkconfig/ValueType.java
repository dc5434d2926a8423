package io.warden.zkconfig;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.Set;
import java.util.TreeSet;
import org.apache.zookeeper.server.command.FourLetterCommands;

/** What a {@code zoo.cfg} value must look like; {@link #problem} says what is wrong with one, or null. */
enum ValueType {
    /** {@code true} or {@code false}. ZooKeeper reads most flags with {@code Boolean.getBoolean}, so "yes" is false. */
    BOOL {
        @Override
        String problem(String v) {
            return v.equals("true") || v.equals("false") ? null : "expected true or false";
        }
    },
    /** {@code yes} or {@code no} (forceSync, leaderServes, skipACL compare with these words). */
    YES_NO {
        @Override
        String problem(String v) {
            return v.equals("yes") || v.equals("no") ? null : "expected yes or no";
        }
    },
    INT {
        @Override
        String problem(String v) {
            return parseLong(v, Integer.MIN_VALUE, Integer.MAX_VALUE, "an integer");
        }
    },
    NON_NEGATIVE_INT {
        @Override
        String problem(String v) {
            return parseLong(v, 0, Integer.MAX_VALUE, "an integer >= 0");
        }
    },
    POSITIVE_INT {
        @Override
        String problem(String v) {
            return parseLong(v, 1, Integer.MAX_VALUE, "an integer >= 1");
        }
    },
    LONG {
        @Override
        String problem(String v) {
            return parseLong(v, Long.MIN_VALUE, Long.MAX_VALUE, "an integer");
        }
    },
    PORT {
        @Override
        String problem(String v) {
            return parseLong(v, 0, 65535, "a port number 0-65535");
        }
    },
    /** A host name or address (no spaces). */
    HOST {
        @Override
        String problem(String v) {
            return v.isEmpty() || v.chars().anyMatch(Character::isWhitespace) ? "expected a host name or address" : null;
        }
    },
    /** A file system path. */
    PATH {
        @Override
        String problem(String v) {
            return v.isEmpty() ? "expected a path" : null;
        }
    },
    /** Any non-empty text. */
    TEXT {
        @Override
        String problem(String v) {
            return v.isEmpty() ? "expected a value" : null;
        }
    },
    /** A class on the server's class path. */
    CLASS {
        @Override
        String problem(String v) {
            if (v.isEmpty()) {
                return "expected a class name";
            }
            try {
                Class.forName(v, false, ValueType.class.getClassLoader());
                return null;
            } catch (ClassNotFoundException | LinkageError e) {
                return "class " + v + " is not on the server's class path";
            }
        }
    },
    /** Comma-separated four-letter words, or {@code *}. */
    FOUR_LETTER_WORDS {
        @Override
        String problem(String v) {
            if (v.equals("*")) {
                return null;
            }
            Set<String> unknown = new TreeSet<>();
            for (String word : v.split(",")) {
                if (!FOUR_LETTER_WORD_NAMES.contains(word.trim())) {
                    unknown.add(word.trim());
                }
            }
            return unknown.isEmpty() ? null
                    : "unknown four-letter word(s) " + unknown + "; known: " + String.join(",", FOUR_LETTER_WORD_NAMES);
        }
    },
    /** ssl.clientAuth: none, want or need. */
    CLIENT_AUTH {
        @Override
        String problem(String v) {
            return Set.of("none", "want", "need").contains(v.toLowerCase(java.util.Locale.ROOT)) ? null
                    : "expected none, want or need";
        }
    };

    /** The four-letter words ZooKeeper knows, read from {@link FourLetterCommands} itself. */
    static final Set<String> FOUR_LETTER_WORD_NAMES = fourLetterWords();

    abstract String problem(String value);

    private static String parseLong(String v, long min, long max, String what) {
        try {
            long n = Long.parseLong(v);
            return n >= min && n <= max ? null : "expected " + what;
        } catch (NumberFormatException e) {
            return "expected " + what;
        }
    }

    private static Set<String> fourLetterWords() {
        Set<String> words = new TreeSet<>();
        for (Field f : FourLetterCommands.class.getFields()) {
            if (f.getType() == int.class && Modifier.isStatic(f.getModifiers())) {
                try {
                    String word = FourLetterCommands.getCommandString(f.getInt(null));
                    if (word != null && word.length() == 4) {
                        words.add(word);
                    }
                } catch (IllegalAccessException | IllegalArgumentException e) {
                    throw new IllegalStateException("cannot read " + f, e);
                }
            }
        }
        return words;
    }
}
