package bag

import (
	"bytes"
	"fmt"
	"io"
	"os"

	"go.yaml.in/yaml/v3"
)

// piecewiseMin is the size from which metadata documents are read a piece
// at a time (a variable so that tests can read small ones so too).
var piecewiseMin = 64 << 10

// maxWholeMetadata bounds a document, or a piece of one, parsed at once:
// the YAML library's tree of it takes up to ~100 times its size.
const maxWholeMetadata = 1 << 20

// metadataBatch is about how much of a list is parsed at once.
const metadataBatch = 32 << 10

// readMetadataFile reads and parses a metadata.yaml, refusing one over
// maxMetadataSize before reading it.
func readMetadataFile(path string) (*Metadata, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && st.Size() > maxMetadataSize {
		return nil, fmt.Errorf("%s: %d bytes is over the %d MiB limit of a metadata file", path, st.Size(), maxMetadataSize>>20)
	}
	return readMetadata(f, path)
}

// readMetadata reads a metadata document through the size limit (the file
// may grow, or not be a regular file) and parses it; errors name path.
func readMetadata(r io.Reader, path string) (*Metadata, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxMetadataSize+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(data) > maxMetadataSize {
		return nil, fmt.Errorf("%s: over the %d MiB limit of a metadata file", path, maxMetadataSize>>20)
	}
	m, err := ParseMetadata(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// mdLine is a line of a document: its text without the end of line, its
// indentation, and whether it holds nothing but spaces or a comment.
type mdLine struct {
	text   []byte
	indent int
	blank  bool
}

// The lists read a few entries at a time.
var metadataLists = map[string]bool{"topics_with_message_count": true, "files": true, "relative_file_paths": true}

// parseMetadataPiecewise reads a document in the block layout rosbag2
// (yaml-cpp) and PyYAML write: a mapping, under a
// `rosbag2_bagfile_information` key or not, whose keys are plain words at
// one indentation. The topic, file and path lists are parsed a batch of
// entries at a time, the rest as one small document. It returns nil and no
// error for a document in another layout, to be parsed whole.
func parseMetadataPiecewise(data []byte) (*Metadata, error) {
	lines := splitLines(data)
	if lines == nil {
		return nil, nil
	}
	i := 0
	for i < len(lines) && lines[i].blank {
		i++
	}
	if i == len(lines) || lines[i].indent != 0 {
		return nil, nil
	}
	// The skeleton: the document without the lists' entries.
	var skel bytes.Buffer
	keyIndent := 0
	if k, rest, ok := mdKey(lines[i].text); ok && k == "rosbag2_bagfile_information" && isEmptyValue(rest) {
		skel.Write(lines[i].text)
		skel.WriteByte('\n')
		i++
		for j := i; j < len(lines); j++ {
			if !lines[j].blank {
				keyIndent = lines[j].indent
				break
			}
		}
		if keyIndent == 0 {
			return nil, nil
		}
	}
	type list struct {
		key     string
		entries [][]byte // the text of batches of entries
	}
	var lists []list
	for i < len(lines) {
		l := lines[i]
		if l.blank {
			i++
			continue
		}
		key, rest, ok := mdKey(l.text[min(l.indent, len(l.text)):])
		if l.indent != keyIndent || !ok {
			return nil, nil
		}
		// The key's section: the lines indented more, and for a list,
		// its entries at the key's own indentation.
		j := i + 1
		for j < len(lines) && (lines[j].blank || lines[j].indent > keyIndent || isEntry(lines[j], keyIndent)) {
			j++
		}
		first := i + 1
		for first < j && lines[first].blank {
			first++
		}
		if !metadataLists[key] || !isEmptyValue(rest) || first == j || !isEntry(lines[first], lines[first].indent) {
			for _, s := range lines[i:j] {
				skel.Write(s.text)
				skel.WriteByte('\n')
			}
			i = j
			continue
		}
		// A block sequence: split it at its entries, in batches.
		fmt.Fprintf(&skel, "%*s%s: []\n", keyIndent, "", key)
		entryIndent := lines[first].indent
		ls := list{key: key}
		var batch []byte
		for k := first; k < j; k++ {
			if lines[k].blank { // kept: it may be in a block scalar
				batch = append(append(batch, lines[k].text...), '\n')
				continue
			}
			if lines[k].indent < entryIndent || (lines[k].indent == entryIndent && !isEntry(lines[k], entryIndent)) {
				return nil, nil
			}
			if lines[k].indent == entryIndent && len(batch) >= metadataBatch {
				ls.entries = append(ls.entries, batch)
				batch = nil
			}
			batch = append(append(batch, lines[k].text...), '\n')
			if len(batch) > maxWholeMetadata {
				return nil, fmt.Errorf("%s: an entry of more than %d KiB", key, maxWholeMetadata>>10)
			}
		}
		if batch != nil {
			ls.entries = append(ls.entries, batch)
		}
		lists = append(lists, ls)
		i = j
	}
	if skel.Len() > maxWholeMetadata {
		return nil, fmt.Errorf("more than %d KiB outside the topic and file lists", maxWholeMetadata>>10)
	}
	m, err := parseMetadataWhole(skel.Bytes())
	if err != nil {
		return nil, err
	}
	for _, ls := range lists {
		for _, b := range ls.entries {
			switch ls.key {
			case "topics_with_message_count":
				var ts []yamlTopicCount
				if err := yaml.Unmarshal(b, &ts); err != nil {
					return nil, err
				}
				if m.Topics, err = appendTopics(m.Topics, ts); err != nil {
					return nil, err
				}
			case "files":
				var fs []yamlFile
				if err := yaml.Unmarshal(b, &fs); err != nil {
					return nil, err
				}
				if m.Files, err = appendFiles(m.Files, fs); err != nil {
					return nil, err
				}
			case "relative_file_paths":
				var ps []string
				if err := yaml.Unmarshal(b, &ps); err != nil {
					return nil, err
				}
				m.RelativeFilePaths = append(m.RelativeFilePaths, ps...)
			}
		}
	}
	return m, nil
}

// splitLines splits a document into lines; nil if it uses tabs for
// indentation, or directives or document markers, which the piecewise
// reader leaves to the YAML library.
func splitLines(data []byte) []mdLine {
	lines := make([]mdLine, 0, bytes.Count(data, []byte{'\n'})+1)
	for len(data) > 0 {
		text := data
		if k := bytes.IndexByte(data, '\n'); k >= 0 {
			text, data = data[:k], data[k+1:]
		} else {
			data = nil
		}
		text = bytes.TrimSuffix(text, []byte{'\r'})
		n := 0
		for n < len(text) && text[n] == ' ' {
			n++
		}
		rest := text[n:]
		if len(rest) > 0 && rest[0] == '\t' {
			return nil
		}
		if n == 0 && (bytes.HasPrefix(text, []byte("---")) || bytes.HasPrefix(text, []byte("...")) ||
			bytes.HasPrefix(text, []byte("%"))) {
			return nil
		}
		lines = append(lines, mdLine{text: text, indent: n,
			blank: len(bytes.TrimSpace(rest)) == 0 || rest[0] == '#'})
	}
	return lines
}

// mdKey splits "key: rest" or "key:" where key is a plain word.
func mdKey(s []byte) (key string, rest []byte, ok bool) {
	k := 0
	for k < len(s) && (s[k] == '_' || s[k] >= 'a' && s[k] <= 'z' || s[k] >= 'A' && s[k] <= 'Z' || k > 0 && s[k] >= '0' && s[k] <= '9') {
		k++
	}
	if k == 0 || k == len(s) || s[k] != ':' || k+1 < len(s) && s[k+1] != ' ' {
		return "", nil, false
	}
	return string(s[:k]), s[k+1:], true
}

// isEmptyValue reports whether what follows a key is nothing, or a comment.
func isEmptyValue(rest []byte) bool {
	rest = bytes.TrimLeft(rest, " ")
	return len(rest) == 0 || rest[0] == '#'
}

// isEntry reports whether a line is a block sequence entry at indent.
func isEntry(l mdLine, indent int) bool {
	if l.blank || l.indent != indent {
		return false
	}
	t := l.text[indent:]
	return t[0] == '-' && (len(t) == 1 || t[1] == ' ')
}
