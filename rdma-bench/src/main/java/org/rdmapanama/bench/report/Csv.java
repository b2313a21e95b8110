package org.rdmapanama.bench.report;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** A CSV file with a header line: the runners' raw.csv (plain) and JMH's -rf csv (quoted fields). */
public record Csv(Path path, List<String> header, List<Map<String, String>> rows) {

    public static Csv read(Path path) throws IOException {
        List<String> lines = Files.readAllLines(path);
        if (lines.isEmpty()) throw new IOException(path + " is empty");
        List<String> header = split(lines.getFirst());
        List<Map<String, String>> rows = new ArrayList<>();
        for (int i = 1; i < lines.size(); i++) {
            if (lines.get(i).isBlank()) continue;
            List<String> fields = split(lines.get(i));
            if (fields.size() != header.size()) {
                throw new IOException(path + ":" + (i + 1) + ": " + fields.size() + " fields, the header has " + header.size());
            }
            Map<String, String> row = new HashMap<>();
            for (int c = 0; c < header.size(); c++) row.put(header.get(c), fields.get(c));
            rows.add(row);
        }
        return new Csv(path, header, rows);
    }

    /** Throws naming the file when a column the report needs is not there. */
    public void require(String... columns) throws IOException {
        for (String c : columns) {
            if (!header.contains(c)) throw new IOException(path + ": no column '" + c + "' (header: " + String.join(",", header) + ")");
        }
    }

    /** Splits one line at commas outside double quotes; "" inside quotes is one quote. */
    static List<String> split(String line) {
        List<String> out = new ArrayList<>();
        StringBuilder f = new StringBuilder();
        boolean quoted = false;
        for (int i = 0; i < line.length(); i++) {
            char ch = line.charAt(i);
            if (quoted) {
                if (ch == '"' && i + 1 < line.length() && line.charAt(i + 1) == '"') {
                    f.append('"');
                    i++;
                } else if (ch == '"') {
                    quoted = false;
                } else {
                    f.append(ch);
                }
            } else if (ch == '"') {
                quoted = true;
            } else if (ch == ',') {
                out.add(f.toString());
                f.setLength(0);
            } else {
                f.append(ch);
            }
        }
        out.add(f.toString());
        return out;
    }
}
