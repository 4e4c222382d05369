package nros

// NodeOption configures a node.
type NodeOption func(*nodeConfig)

type nodeConfig struct {
	namespace string
	ctx       *Context
}

// WithNamespace puts the node in a namespace ("/robot1").
func WithNamespace(ns string) NodeOption { return func(c *nodeConfig) { c.namespace = ns } }

// WithContext puts the node in a context other than DefaultContext.
func WithContext(ctx *Context) NodeOption { return func(c *nodeConfig) { c.ctx = ctx } }

// NewNode creates a node.
func NewNode(name string, opts ...NodeOption) (*Node, error) {
	cfg := nodeConfig{namespace: "/"}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.ctx == nil {
		cfg.ctx = DefaultContext()
	}
	n := &Node{name: name, namespace: cfg.namespace, ctx: cfg.ctx}
	return n, nil
}
