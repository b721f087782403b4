#include "ss/core/job/epoch_options.hpp"

#include "ss/core/json.hpp"

namespace ss::job {

void add_epoch_options(config::option_set& opts, epoch_options& o) {
  opts.add("epochs", &o.epochs,
           "Passes over the training files. Metrics of the first pass are progressive (each example scored "
           "before it is trained on); later passes see examples again, so theirs are not.")
      .range(1, 10000);
  opts.add("shuffle-buffer", &o.shuffle_buffer,
           "Examples permuted together (a seeded window, bounded memory), and the files' order permuted "
           "each epoch; 0 = read in order (the time order of one-pass training); -1 = 0 for one epoch, "
           "100000 for more.")
      .range(-1, 100000000);
  opts.add("validation", &o.validation,
           "Files scored after every epoch; the best epoch's model (lowest validation log loss) is the one "
           "tested and exported.");
  opts.add("early-stop-patience", &o.early_stop_patience,
           "Stop after this many epochs without a better validation log loss; 0 = never (needs --validation).")
      .range(0, 10000);
  opts.add("eval-every", &o.eval_every,
           "Also score --validation every this many examples within an epoch (a long one-pass job's "
           "curve); the best model is still chosen per epoch. 0 = after each epoch only.");
}

std::string evaluations_json(const std::vector<evaluation>& evaluations) {
  std::vector<std::string> items;
  for (const auto& e : evaluations) {
    json_object j;
    metrics::add_validation_fields(j.add("epoch", e.epoch).add("examples", e.examples), e.validation);
    items.push_back(j.str());
  }
  return json_array(items);
}

status check_epoch_options(const epoch_options& o) {
  if (o.early_stop_patience > 0 && o.validation.empty())
    return {errc::invalid_argument, "--early-stop-patience " + std::to_string(o.early_stop_patience) +
                                        " needs --validation: early stopping compares the validation log loss of "
                                        "each epoch"};
  if (o.eval_every > 0 && o.validation.empty())
    return {errc::invalid_argument, "--eval-every " + std::to_string(o.eval_every) +
                                        " needs --validation: it scores the validation files"};
  if (o.early_stop_patience > 0 && o.early_stop_patience >= o.epochs)
    return {errc::invalid_argument, "--early-stop-patience " + std::to_string(o.early_stop_patience) +
                                        " cannot stop a run of --epochs " + std::to_string(o.epochs) +
                                        ": give more epochs or a smaller patience"};
  return status::ok();
}

}  // namespace ss::job
