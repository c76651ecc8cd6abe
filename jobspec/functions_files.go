package jobspec

import (
	"fmt"

	"github.com/hashicorp/go-cty-funcs/crypto"
	"github.com/hashicorp/go-cty-funcs/filesystem"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"
	"github.com/zclconf/go-cty/cty/gocty"
)

// fileAccess says whether a parse may read the filesystem, and relative to which directory.
// A nil *fileAccess is the agent's case: the job came over HTTP, so the files it names are
// the agent's, not the submitter's, and reading them would hand the agent's disk to any
// caller allowed to parse jobs.
type fileAccess struct {
	baseDir string
}

// fileFunctionNames are the functions that read the filesystem or resolve paths against
// the process's own directory or home.
var fileFunctionNames = []string{"file", "filebase64", "fileexists", "fileset", "abspath", "pathexpand"}

func (f *fileAccess) functions() map[string]function.Function {
	out := make(map[string]function.Function, len(fileFunctionNames))
	if f == nil {
		for _, name := range fileFunctionNames {
			out[name] = refusedFileFunction(name)
		}
		return out
	}
	out["file"] = filesystem.MakeFileFunc(f.baseDir, false)
	out["filebase64"] = filesystem.MakeFileFunc(f.baseDir, true)
	out["fileexists"] = filesystem.MakeFileExistsFunc(f.baseDir)
	out["fileset"] = filesystem.MakeFileSetFunc(f.baseDir)
	out["abspath"] = filesystem.AbsPathFunc
	out["pathexpand"] = filesystem.PathExpandFunc
	return out
}

// refusedFileFunction takes any arguments, so the message below is what the caller sees
// rather than an arity or type complaint.
func refusedFileFunction(name string) function.Function {
	return function.New(&function.Spec{
		VarParam: &function.Parameter{Name: "args", Type: cty.DynamicPseudoType, AllowNull: true, AllowUnknown: true, AllowDynamicType: true},
		Type:     function.StaticReturnType(cty.DynamicPseudoType),
		Impl: func([]cty.Value, cty.Type) (cty.Value, error) {
			return cty.NilVal, fmt.Errorf("%s() reads the filesystem, which is only allowed when the CLI parses a job file on your machine "+
				"(nomad job run/plan/validate FILE, or `nomad job run -output FILE` to render JSON); the agent does not read its own disk for an API caller", name)
		},
	})
}

// maxBcryptCost bounds bcrypt's work factor: each step doubles the time, and cost 31 would
// keep a parse (on the agent, for any caller allowed to parse jobs) busy for days. 12 is
// above the library's default of 10 and takes well under a second.
const maxBcryptCost = 12

var boundedBcrypt = function.New(&function.Spec{
	Params:   crypto.BcryptFunc.Params(),
	VarParam: crypto.BcryptFunc.VarParam(),
	Type:     function.StaticReturnType(cty.String),
	Impl: func(args []cty.Value, retType cty.Type) (cty.Value, error) {
		if len(args) > 1 && args[1].IsKnown() && !args[1].IsNull() {
			var cost int
			if err := gocty.FromCtyValue(args[1], &cost); err != nil {
				return cty.UnknownVal(cty.String), fmt.Errorf("bcrypt cost: %w", err)
			}
			if cost > maxBcryptCost {
				return cty.UnknownVal(cty.String), fmt.Errorf("bcrypt cost %d is over the limit of %d", cost, maxBcryptCost)
			}
		}
		return crypto.BcryptFunc.Call(args)
	},
})

// indexFunc is cty's index (element at a list position or map key) that also accepts an
// object, which is what an HCL literal such as {a = 1, c = 2} is; upstream's documented
// example indexes exactly such a literal.
var indexFunc = function.New(&function.Spec{
	Params: []function.Parameter{
		{Name: "collection", Type: cty.DynamicPseudoType},
		{Name: "key", Type: cty.DynamicPseudoType, AllowDynamicType: true},
	},
	Type: func(args []cty.Value) (cty.Type, error) {
		coll, key := args[0], args[1]
		if !coll.Type().IsObjectType() {
			return stdlib.IndexFunc.ReturnTypeForValues(args)
		}
		if !key.IsKnown() {
			return cty.DynamicPseudoType, nil
		}
		name, err := objectKey(key)
		if err != nil {
			return cty.NilType, err
		}
		if !coll.Type().HasAttribute(name) {
			return cty.NilType, fmt.Errorf("the given object has no attribute %q", name)
		}
		return coll.Type().AttributeType(name), nil
	},
	Impl: func(args []cty.Value, retType cty.Type) (cty.Value, error) {
		coll, key := args[0], args[1]
		if !coll.Type().IsObjectType() {
			return stdlib.IndexFunc.Call(args)
		}
		name, err := objectKey(key)
		if err != nil {
			return cty.NilVal, err
		}
		return coll.GetAttr(name), nil
	},
})

func objectKey(key cty.Value) (string, error) {
	if key.IsNull() || key.Type() != cty.String {
		return "", fmt.Errorf("key for an object must be a string")
	}
	return key.AsString(), nil
}
