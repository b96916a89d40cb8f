#include "headspec/activation.hpp"

#include "headspec/name_table.hpp"

namespace headspec {

namespace {

// Every activation's name on the command line, in the order listed (docs/model.md §3); its
// maths is its policy in include/headspec/kernel/activations.hpp.
constexpr NameTable<Activation, 5> kActivations{{{
                                                    {Activation::Softmax, "softmax"},
                                                    {Activation::Softmax1, "softmax1"},
                                                    {Activation::BayesSoftmax, "bsoftmax"},
                                                    {Activation::Linear, "linear"},
                                                    {Activation::Sigmoid, "sigmoid"},
                                                }},
                                                "--activation",
                                                "activation"};

constexpr NameTable<Readout, 3> kReadouts{
    {{{Readout::Learned, "learned"}, {Readout::Sum, "sum"}, {Readout::Mean, "mean"}}}, "--readout", "readout"};

}  // namespace

std::string activation_names(const char* separator) { return kActivations.names(separator); }
std::vector<Activation> all_activations() { return kActivations.values(); }
Activation parse_activation(const std::string& name) { return kActivations.parse(name); }
const char* to_string(Activation a) { return kActivations.name(a); }

Readout parse_readout(const std::string& name) { return kReadouts.parse(name); }
const char* to_string(Readout r) { return kReadouts.name(r); }

}  // namespace headspec
