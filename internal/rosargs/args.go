// Package rosargs parses the ROS 2 command line (`--ros-args ... [--]`
// blocks) as rcl does, and implements ROS name validation, expansion and
// remapping, node name/namespace remapping, parameter-override resolution
// and ROS_DOMAIN_ID parsing.
//
// Deliberate differences from rcl: a remap rule outside --ros-args (rcl's
// deprecated form) is left in Unparsed; a value that is "--" or
// "--ros-args" counts as missing; --enclave is validated at parse time
// (rcl does it at init); in ExpandTopicName "{ns}/x" in the root
// namespace gives "/x" where rcl would produce the invalid "//x".
package rosargs

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/nros-go/nros/internal/param"
)

// ArgError is a bad ROS argument: Arg is the offending argument (the flag
// when its value is missing, else the value), Reason says what is wrong.
type ArgError struct {
	Arg    string
	Reason string
}

// Error implements the error interface.
func (e *ArgError) Error() string {
	arg := fmt.Sprintf("%q", e.Arg)
	if len(e.Arg) > 80 { // the reason names what is wrong in it
		arg = fmt.Sprintf("%q (%d characters)", e.Arg[:60]+"...", len(e.Arg))
	}
	return fmt.Sprintf("invalid ROS argument %s: %s", arg, e.Reason)
}

// RemapKind says what a remap rule renames.
type RemapKind int

// Remap rule kinds.
const (
	// RemapName renames topics and services ("from:=to").
	RemapName RemapKind = iota
	// RemapTopicOnly renames topics only ("rostopic://from:=to").
	RemapTopicOnly
	// RemapServiceOnly renames services only ("rosservice://from:=to").
	RemapServiceOnly
	// RemapNodeName renames the node ("__node:=name" or "__name:=name").
	RemapNodeName
	// RemapNamespace moves the node ("__ns:=/ns").
	RemapNamespace
)

// RemapRule is one -r/--remap rule.
type RemapRule struct {
	// Node, when not empty, limits the rule to the node with this name.
	Node string
	Kind RemapKind
	// From and To are as written (names relative to the node are expanded
	// when the rule is applied).
	From, To string
}

// ParamRule is one -p/--param rule.
type ParamRule struct {
	// Node is the node name before ':' ("" = every node). As in rcl and
	// rclcpp it is matched against the fully qualified node name like a
	// params-file key, so "talker:" targets "/talker" only.
	Node  string
	Name  string
	Value param.Value
}

// LoggerLevel is a "--log-level logger:=level" rule.
type LoggerLevel struct {
	Logger string
	Level  string
}

// paramSource is one -p rule or --params-file, in command-line order.
type paramSource struct {
	file   string
	rule   ParamRule
	isRule bool
}

// Args is the parsed command line. Its methods accept a nil *Args (no
// arguments).
type Args struct {
	// Unparsed holds the non-ROS arguments (outside --ros-args blocks), in order.
	Unparsed []string
	// Params holds the -p rules in order.
	Params []ParamRule
	// ParamsFiles holds the --params-file paths in order.
	ParamsFiles []string
	// Remaps holds the -r rules in order.
	Remaps []RemapRule
	// LogLevel is the default log level from "--log-level LEVEL" (lower
	// case; "" if not given; the last one wins).
	LogLevel string
	// LoggerLevels holds the "--log-level logger:=level" rules in order.
	LoggerLevels []LoggerLevel
	// Enclave is the -e/--enclave value ("" if not given).
	Enclave string
	// RosoutLogs, StdoutLogs and ExternalLibLogs are the log sinks
	// (all enabled unless disabled, as in rcl).
	RosoutLogs, StdoutLogs, ExternalLibLogs bool
	// LogConfigFile and LogFileName are --log-config-file and --log-file-name.
	LogConfigFile, LogFileName string

	sources []paramSource
}

// LogLevels are the accepted --log-level values (any case).
var LogLevels = []string{"debug", "info", "warn", "error", "fatal"}

// Parse parses a command line without argv[0]. Every "--ros-args" starts a
// block that runs to the next "--" (consumed) or the end; arguments outside
// blocks go to Unparsed in order. Inside a block: -p/--param, -r/--remap,
// --params-file, --log-level, -e/--enclave, --log-config-file,
// --log-file-name (each taking the next argument), and the flags
// --enable-/--disable-rosout-logs, -stdout-logs, -external-lib-logs. An
// unknown argument, a missing value or a malformed value is an *ArgError.
func Parse(args []string) (*Args, error) {
	a := &Args{RosoutLogs: true, StdoutLogs: true, ExternalLibLogs: true}
	for i := 0; i < len(args); i++ {
		if args[i] != "--ros-args" {
			a.Unparsed = append(a.Unparsed, args[i])
			continue
		}
		for i++; i < len(args); i++ {
			arg := args[i]
			if arg == "--" {
				break
			}
			if arg == "--ros-args" {
				continue
			}
			if done, err := a.flag(arg); done {
				continue
			} else if err != nil {
				return nil, err
			}
			if !takesValue(arg) {
				return nil, &ArgError{Arg: arg, Reason: "unknown ROS argument"}
			}
			if i+1 >= len(args) || args[i+1] == "--" || args[i+1] == "--ros-args" {
				return nil, &ArgError{Arg: arg, Reason: "missing value"}
			}
			i++
			if err := a.option(arg, args[i]); err != nil {
				return nil, err
			}
		}
	}
	return a, nil
}

func (a *Args) flag(arg string) (bool, error) {
	switch arg {
	case "--enable-rosout-logs":
		a.RosoutLogs = true
	case "--disable-rosout-logs":
		a.RosoutLogs = false
	case "--enable-stdout-logs":
		a.StdoutLogs = true
	case "--disable-stdout-logs":
		a.StdoutLogs = false
	case "--enable-external-lib-logs":
		a.ExternalLibLogs = true
	case "--disable-external-lib-logs":
		a.ExternalLibLogs = false
	default:
		return false, nil
	}
	return true, nil
}

func takesValue(arg string) bool {
	switch arg {
	case "-p", "--param", "-r", "--remap", "--params-file", "--log-level",
		"-e", "--enclave", "--log-config-file", "--log-file-name":
		return true
	}
	return false
}

func (a *Args) option(flag, v string) error {
	bad := func(format string, args ...any) error {
		return &ArgError{Arg: v, Reason: flag + ": " + fmt.Sprintf(format, args...)}
	}
	switch flag {
	case "-p", "--param":
		r, err := parseParamRule(v)
		if err != nil {
			return bad("%v", err)
		}
		a.Params = append(a.Params, r)
		a.sources = append(a.sources, paramSource{rule: r, isRule: true})
	case "--params-file":
		if v == "" {
			return bad("empty file name")
		}
		a.ParamsFiles = append(a.ParamsFiles, v)
		a.sources = append(a.sources, paramSource{file: v})
	case "-r", "--remap":
		r, err := parseRemapRule(v)
		if err != nil {
			return bad("%v", err)
		}
		a.Remaps = append(a.Remaps, r)
	case "--log-level":
		logger, level := "", v
		if i := strings.Index(v, ":="); i >= 0 {
			logger, level = v[:i], v[i+2:]
			if logger == "" {
				return bad("empty logger name")
			}
		}
		l := strings.ToLower(level)
		ok := false
		for _, x := range LogLevels {
			ok = ok || x == l
		}
		if !ok {
			return bad("unknown log level %q (want one of %s)", level, strings.Join(LogLevels, ", "))
		}
		if logger == "" {
			a.LogLevel = l
		} else {
			a.LoggerLevels = append(a.LoggerLevels, LoggerLevel{Logger: logger, Level: l})
		}
	case "-e", "--enclave":
		if err := validateAbsolute("enclave", v, true, MaxNamespaceLength); err != nil {
			return bad("%v", err)
		}
		a.Enclave = v
	case "--log-config-file":
		if v == "" {
			return bad("empty file name")
		}
		a.LogConfigFile = v
	case "--log-file-name":
		if v == "" {
			return bad("empty file name")
		}
		a.LogFileName = v
	}
	return nil
}

// isLexToken reports whether s is one token of rcl's argument lexer:
// a letter or '_' followed by letters, digits and '_', with no "__"
// (the lexer splits there, and "__" starts __node/__ns).
func isLexToken(s string) bool {
	if s == "" || isDigit(s[0]) || strings.Contains(s, "__") {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isAlnum(c) && c != '_' {
			return false
		}
	}
	return true
}

// validRemapName checks a remap rule's match or replacement against rcl's
// grammar: an optional "~/" or "/" and then tokens separated by '/'.
// (Substitutions and wildcards are not allowed in rules.)
func validRemapName(s string) error {
	body := strings.TrimPrefix(strings.TrimPrefix(s, "~/"), "/")
	if len(body) < len(s)-2 || body == "" {
		return fmt.Errorf("name %q: expected [~/ or /]token[/token...]", s)
	}
	for _, tok := range strings.Split(body, "/") {
		if !isLexToken(tok) {
			return fmt.Errorf("name %q: %q is not a valid name token", s, tok)
		}
	}
	return nil
}

// ValidateParamName checks a -p parameter name as rcl's grammar does:
// '.'-separated non-empty parts made of letters, digits, '_' and '/',
// where no part and no token after a '/' starts with a digit.
// ("qos_overrides./clock.subscription.depth" is valid.)
func ValidateParamName(name string) error {
	if name == "" {
		return fmt.Errorf("empty parameter name")
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; !isAlnum(c) && c != '_' && c != '.' && c != '/' {
			return fmt.Errorf("parameter name %q must not contain %q", name, c)
		}
	}
	for _, part := range strings.Split(name, ".") {
		if part == "" {
			return fmt.Errorf("parameter name %q has an empty part", name)
		}
		for i := 0; i < len(part); i++ {
			if isDigit(part[i]) && (i == 0 || part[i-1] == '/') {
				return fmt.Errorf("parameter name %q has a token starting with a number", name)
			}
		}
	}
	return nil
}

func parseParamRule(v string) (ParamRule, error) {
	i := strings.Index(v, ":=")
	if i < 0 {
		return ParamRule{}, fmt.Errorf("expected [node:]name:=value")
	}
	left, text := v[:i], v[i+2:]
	var r ParamRule
	if j := strings.IndexByte(left, ':'); j >= 0 {
		r.Node, left = left[:j], left[j+1:]
		if !isLexToken(r.Node) {
			return ParamRule{}, fmt.Errorf("bad node name %q before ':' (a plain node name is expected)", r.Node)
		}
	}
	if err := ValidateParamName(left); err != nil {
		return ParamRule{}, err
	}
	r.Name = left
	val, err := param.ParseValue(text)
	if err != nil {
		return ParamRule{}, fmt.Errorf("parameter %q: %v", left, err)
	}
	r.Value = val
	return r, nil
}

func parseRemapRule(v string) (RemapRule, error) {
	i := strings.Index(v, ":=")
	if i < 0 {
		return RemapRule{}, fmt.Errorf("expected [node:]from:=to")
	}
	left, to := v[:i], v[i+2:]
	var r RemapRule
	// A node prefix ends at the first ':' not starting "://".
	if j := strings.IndexByte(left, ':'); j >= 0 && !strings.HasPrefix(left[j:], "://") {
		r.Node, left = left[:j], left[j+1:]
		if !isLexToken(r.Node) {
			return RemapRule{}, fmt.Errorf("bad node name %q before ':'", r.Node)
		}
	}
	switch {
	case strings.HasPrefix(left, "rostopic://"):
		r.Kind, left = RemapTopicOnly, strings.TrimPrefix(left, "rostopic://")
	case strings.HasPrefix(left, "rosservice://"):
		r.Kind, left = RemapServiceOnly, strings.TrimPrefix(left, "rosservice://")
	}
	r.From, r.To = left, to
	switch left {
	case "__node", "__name":
		if r.Kind != RemapName {
			return RemapRule{}, fmt.Errorf("%s cannot have a rostopic:// or rosservice:// prefix", left)
		}
		r.Kind = RemapNodeName
		if err := ValidateNodeName(to); err != nil {
			return RemapRule{}, err
		}
		if !isLexToken(to) {
			return RemapRule{}, fmt.Errorf("node name %q is not a valid name token", to)
		}
	case "__ns":
		if r.Kind != RemapName {
			return RemapRule{}, fmt.Errorf("__ns cannot have a rostopic:// or rosservice:// prefix")
		}
		r.Kind = RemapNamespace
		if err := ValidateNamespace(to); err != nil {
			return RemapRule{}, err
		}
	default:
		if strings.HasPrefix(left, "__") {
			return RemapRule{}, fmt.Errorf("unknown special name %q", left)
		}
		if err := validRemapName(left); err != nil {
			return RemapRule{}, fmt.Errorf("bad 'from' %v", err)
		}
		if err := validRemapName(to); err != nil {
			return RemapRule{}, fmt.Errorf("bad 'to' %v", err)
		}
		if err := checkLiteralLength(to); err != nil {
			return RemapRule{}, fmt.Errorf("bad 'to': %v", err)
		}
	}
	return r, nil
}

// NodeName returns the node name after __node/__name remapping: the first
// rule that is global or targets a node named def wins; else def.
func (a *Args) NodeName(def string) string {
	if a == nil {
		return def
	}
	for _, r := range a.Remaps {
		if r.Kind == RemapNodeName && (r.Node == "" || r.Node == def) {
			return r.To
		}
	}
	return def
}

// Namespace returns the namespace after global (not node-targeted) __ns
// remapping, or def. Use NamespaceFor to honour node-targeted rules.
func (a *Args) Namespace(def string) string {
	if a == nil {
		return def
	}
	for _, r := range a.Remaps {
		if r.Kind == RemapNamespace && r.Node == "" {
			return r.To
		}
	}
	return def
}

// NamespaceFor returns the namespace of the node whose original name is
// nodeName after __ns remapping: the first rule that is global or targets
// nodeName wins; else def.
func (a *Args) NamespaceFor(nodeName, def string) string {
	if a == nil {
		return def
	}
	for _, r := range a.Remaps {
		if r.Kind == RemapNamespace && (r.Node == "" || r.Node == nodeName) {
			return r.To
		}
	}
	return def
}

func (a *Args) remap(fqName, nodeName, ns string, service bool) (string, error) {
	if a == nil {
		return fqName, nil
	}
	for _, r := range a.Remaps {
		switch r.Kind {
		case RemapName:
		case RemapTopicOnly:
			if service {
				continue
			}
		case RemapServiceOnly:
			if !service {
				continue
			}
		default:
			continue
		}
		if r.Node != "" && r.Node != nodeName {
			continue
		}
		from, err := ExpandTopicName(r.From, nodeName, ns)
		if err != nil || from != fqName {
			continue
		}
		to, err := ExpandTopicName(r.To, nodeName, ns)
		if err != nil {
			// The rule matches but its target is not a valid name here
			// (e.g. too long once ~ or {node} are expanded): an error, as
			// rcl_remap_topic_name gives, never a silent fallback.
			return "", fmt.Errorf("remap rule %s:=%s: %w", r.From, r.To, err)
		}
		return to, nil
	}
	return fqName, nil
}

// RemapTopic applies the topic remap rules to an expanded (fully
// qualified) topic name of the node nodeName in nodeNamespace, as
// rcl_remap_topic_name does: rules are tried in order, node-targeted ones
// only for that node; a rule's from and to are expanded relative to the
// node; the first rule whose expanded from equals fqName gives the result.
// Without a match, fqName is returned unchanged. A matching rule whose
// target does not expand to a valid name (too long, bad characters) is an
// error naming the rule.
func (a *Args) RemapTopic(fqName, nodeName, nodeNamespace string) (string, error) {
	return a.remap(fqName, nodeName, nodeNamespace, false)
}

// RemapService is RemapTopic for service names.
func (a *Args) RemapService(fqName, nodeName, nodeNamespace string) (string, error) {
	return a.remap(fqName, nodeName, nodeNamespace, true)
}

// ParamOverrides resolves the parameter overrides for the node with fully
// qualified name fqn the way rcl and rclcpp do: params files and -p rules
// are parsed, in command-line order, into one set of node entries (an
// entry per node key in order of first appearance; a -p rule without a
// node goes to the "/**" entry, "talker:" to the "talker" entry; later
// values replace earlier ones within an entry), then every entry matching
// fqn is applied in entry order. So a later `-p x:=5` loses to an earlier
// file's "/talker: x: 2" for /talker, because "/**" was seen first.
// Files are read with readFile (ReadParamsFile if nil: bounded).
func (a *Args) ParamOverrides(fqn string, readFile func(string) ([]byte, error)) (map[string]param.Value, error) {
	f, err := a.ParamsSet(readFile)
	if err != nil {
		return nil, err
	}
	return f.ForNode(fqn), nil
}

// ParamsFileError is a params file that could not be read or parsed.
type ParamsFileError struct {
	Path string
	Err  error
}

// Error implements the error interface.
func (e *ParamsFileError) Error() string { return fmt.Sprintf("params file %q: %v", e.Path, e.Err) }

// Unwrap returns the cause.
func (e *ParamsFileError) Unwrap() error { return e.Err }

// ReadParamsFile reads a params file of at most param.MaxYAMLSize bytes. The
// limit is checked while reading, so /dev/zero or a huge file costs no
// more than the limit.
func ReadParamsFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// Grow the buffer by doubling but never past the limit + 1 byte, so a
	// huge file costs at most about twice the limit.
	const limit = param.MaxYAMLSize + 1
	size := 64 << 10
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size() < limit {
		size = int(fi.Size()) + 1 // one allocation for a plain file (+1 to see EOF)
	}
	data := make([]byte, 0, min(size, limit))
	for {
		if len(data) == cap(data) {
			if cap(data) == limit {
				break
			}
			data = append(make([]byte, 0, min(2*cap(data), limit)), data...)
		}
		n, err := f.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	if len(data) > param.MaxYAMLSize {
		return nil, fmt.Errorf("larger than the limit of %d bytes (%d MiB)", param.MaxYAMLSize, param.MaxYAMLSize>>20)
	}
	return data, nil
}

// ParamsSet loads the params files and -p rules, in command-line order,
// into one param.File (see ParamOverrides). Files are read with readFile,
// or ReadParamsFile if it is nil.
func (a *Args) ParamsSet(readFile func(string) ([]byte, error)) (*param.File, error) {
	if readFile == nil {
		readFile = ReadParamsFile
	}
	all := &param.File{}
	if a == nil {
		return all, nil
	}
	for _, s := range a.sources {
		if s.isRule {
			all.Set(s.rule.Node, s.rule.Name, s.rule.Value)
			continue
		}
		data, err := readFile(s.file)
		if err != nil {
			return nil, &ParamsFileError{Path: s.file, Err: err}
		}
		f, err := param.LoadYAML(data)
		if err != nil {
			return nil, &ParamsFileError{Path: s.file, Err: err}
		}
		all.Merge(f)
	}
	return all, nil
}

// ParseDomainID parses ROS_DOMAIN_ID: empty (or blank) means 0; otherwise
// a decimal number 0..232.
func ParseDomainID(env string) (int, error) {
	s := strings.TrimSpace(env)
	if s == "" {
		return 0, nil
	}
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return 0, fmt.Errorf("ROS_DOMAIN_ID %q is not a number", env)
		}
	}
	n, err := strconv.Atoi(s)
	if err != nil || n > 232 {
		return 0, fmt.Errorf("ROS_DOMAIN_ID %q is out of range 0..232", env)
	}
	return n, nil
}
