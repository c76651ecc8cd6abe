package jobspec

import (
	"github.com/hashicorp/go-cty-funcs/cidr"
	"github.com/hashicorp/go-cty-funcs/crypto"
	"github.com/hashicorp/go-cty-funcs/encoding"
	"github.com/hashicorp/go-cty-funcs/filesystem"
	"github.com/hashicorp/go-cty-funcs/uuid"
	"github.com/hashicorp/hcl/v2/ext/tryfunc"
	"github.com/hashicorp/hcl/v2/ext/typeexpr"
	ctyyaml "github.com/zclconf/go-cty-yaml"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"
)

// functions is the table of functions a job file may call: cty's stdlib, hcl's
// extensions and hashicorp/go-cty-funcs, the same libraries upstream's job files are
// written against. Nothing here touches the network or the clock. The filesystem functions
// read files only when files says where (the CLI, parsing a file on the user's own
// machine); when the agent parses a job for an API caller they fail with a message saying
// why, so a job submitted over HTTP cannot read the agent's disk.
func functions(files *fileAccess) map[string]function.Function {
	fns := map[string]function.Function{
		// strings
		"chomp":         stdlib.ChompFunc,
		"format":        stdlib.FormatFunc,
		"formatlist":    stdlib.FormatListFunc,
		"indent":        stdlib.IndentFunc,
		"join":          stdlib.JoinFunc,
		"lower":         stdlib.LowerFunc,
		"regex":         stdlib.RegexFunc,
		"regexall":      stdlib.RegexAllFunc,
		"regex_replace": stdlib.RegexReplaceFunc,
		"replace":       stdlib.ReplaceFunc,
		"split":         stdlib.SplitFunc,
		"strlen":        stdlib.StrlenFunc,
		"strrev":        stdlib.ReverseFunc,
		"substr":        stdlib.SubstrFunc,
		"title":         stdlib.TitleFunc,
		"trim":          stdlib.TrimFunc,
		"trimprefix":    stdlib.TrimPrefixFunc,
		"trimspace":     stdlib.TrimSpaceFunc,
		"trimsuffix":    stdlib.TrimSuffixFunc,
		"upper":         stdlib.UpperFunc,

		// numbers
		"abs":      stdlib.AbsoluteFunc,
		"ceil":     stdlib.CeilFunc,
		"floor":    stdlib.FloorFunc,
		"log":      stdlib.LogFunc,
		"max":      stdlib.MaxFunc,
		"min":      stdlib.MinFunc,
		"parseint": stdlib.ParseIntFunc,
		"pow":      stdlib.PowFunc,
		"signum":   stdlib.SignumFunc,

		// collections
		"chunklist":       stdlib.ChunklistFunc,
		"coalesce":        stdlib.CoalesceFunc,
		"coalescelist":    stdlib.CoalesceListFunc,
		"compact":         stdlib.CompactFunc,
		"concat":          stdlib.ConcatFunc,
		"contains":        stdlib.ContainsFunc,
		"distinct":        stdlib.DistinctFunc,
		"element":         stdlib.ElementFunc,
		"flatten":         stdlib.FlattenFunc,
		"keys":            stdlib.KeysFunc,
		"length":          stdlib.LengthFunc,
		"lookup":          stdlib.LookupFunc,
		"merge":           stdlib.MergeFunc,
		"range":           stdlib.RangeFunc,
		"reverse":         stdlib.ReverseListFunc,
		"setintersection": stdlib.SetIntersectionFunc,
		"setproduct":      stdlib.SetProductFunc,
		"setsubtract":     stdlib.SetSubtractFunc,
		"setunion":        stdlib.SetUnionFunc,
		"slice":           stdlib.SliceFunc,
		"sort":            stdlib.SortFunc,
		"values":          stdlib.ValuesFunc,
		"zipmap":          stdlib.ZipmapFunc,

		// encoding and time formatting (pure: no "now")
		"csvdecode":  stdlib.CSVDecodeFunc,
		"jsondecode": stdlib.JSONDecodeFunc,
		"jsonencode": stdlib.JSONEncodeFunc,
		"formatdate": stdlib.FormatDateFunc,
		"timeadd":    stdlib.TimeAddFunc,

		// conversion and error handling
		"can":      tryfunc.CanFunc,
		"try":      tryfunc.TryFunc,
		"tobool":   stdlib.MakeToFunc(cty.Bool),
		"tolist":   stdlib.MakeToFunc(cty.List(cty.DynamicPseudoType)),
		"tomap":    stdlib.MakeToFunc(cty.Map(cty.DynamicPseudoType)),
		"tonumber": stdlib.MakeToFunc(cty.Number),
		"toset":    stdlib.MakeToFunc(cty.Set(cty.DynamicPseudoType)),
		"tostring": stdlib.MakeToFunc(cty.String),
		"convert":  typeexpr.ConvertFunc,

		// go-cty-funcs and cty-yaml: pure functions of their arguments
		"base64decode": encoding.Base64DecodeFunc,
		"base64encode": encoding.Base64EncodeFunc,
		"urlencode":    encoding.URLEncodeFunc,
		"yamldecode":   ctyyaml.YAMLDecodeFunc,
		"yamlencode":   ctyyaml.YAMLEncodeFunc,
		"cidrhost":     cidr.HostFunc,
		"cidrnetmask":  cidr.NetmaskFunc,
		"cidrsubnet":   cidr.SubnetFunc,
		"cidrsubnets":  cidr.SubnetsFunc,
		"md5":          crypto.Md5Func,
		"sha1":         crypto.Sha1Func,
		"sha256":       crypto.Sha256Func,
		"sha512":       crypto.Sha512Func,
		"bcrypt":       boundedBcrypt,
		"rsadecrypt":   crypto.RsaDecryptFunc,
		"uuidv4":       uuid.V4Func,
		"uuidv5":       uuid.V5Func,
		"index":        indexFunc,
		"basename":     filesystem.BasenameFunc,
		"dirname":      filesystem.DirnameFunc,
	}
	for name, f := range files.functions() {
		fns[name] = f
	}
	return fns
}
