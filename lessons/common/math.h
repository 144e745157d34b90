#pragma once
// Formulas in the lessons' prose, written between dollar signs in a small
// subset of TeX and rendered twice: as MathML on the pages (Chromium,
// Firefox and Safari draw it with no script) and as plain text on the
// terminal.
//
//   r.paragraph("each pair turns by $m\\theta_i$, $\\theta_i = 10000^{-2(i-1)/d}$");
//
//   page:     <math><mi>m</mi><msub><mi>θ</mi><mi>i</mi></msub></math> …
//   terminal: mθ_i, θ_i = 10000^(-2(i-1)/d)
//
// What it reads: letters (one <mi> each), numbers, operators, {groups},
// x^y, x_y, x_y^z, and the commands below. Greek letters and symbols may
// be written as themselves (θ, ≤, ·) or as commands (\theta, \le, \cdot).
//   \frac{a}{b}  \sqrt{x}  \hat{x}  \text{words}  \mathrm{name}
//   \mathbf{x}  \left( … \right)  \quad  \,
// A name from the code is written between backticks, `ag::rope`: <code> on
// the page, the bare name on the terminal. A literal dollar sign is \$. Anything else that starts with a backslash
// is an error: std::invalid_argument naming it, so that a typo in a lesson
// fails its test instead of printing TeX on a page.
#include <string>
#include <string_view>

namespace lessons::math {

// `text` with every $…$ span replaced by MathML (inline) and the rest
// escaped for HTML; $$…$$ is a displayed formula (a block of its own) and
// `name` a name from the code.
std::string html(std::string_view text);

// `text` with every $…$ span as plain text for the terminal (and `name` as
// the bare name): commands as their symbols, x^{ab} as x^(ab), \frac{a}{b} as (a)/(b).
std::string plain(std::string_view text);

}  // namespace lessons::math
