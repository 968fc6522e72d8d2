"""``strata.utils.tensorboard.SummaryWriter``: TensorBoard event files through tensorboardX.

tensorboardX (an optional dependency: ``pip install tensorboardX``) writes real event files
without TensorFlow; strata converts its tensors to NumPy on the way in. Without it, creating a
writer raises ImportError naming the package.
"""


def _to_numpy(value):
    if hasattr(value, "_keyset"):
        return value.detach().cpu().numpy()
    return value


class SummaryWriter:
    """``SummaryWriter(log_dir=None, comment='', purge_step=None, max_queue=10,
    flush_secs=120, filename_suffix='')`` as in ``torch.utils.tensorboard``."""

    def __init__(self, log_dir=None, comment="", purge_step=None, max_queue=10, flush_secs=120,
                 filename_suffix=""):
        try:
            from tensorboardX import SummaryWriter as _Writer
        except ImportError:
            raise ImportError("strata.utils.tensorboard.SummaryWriter needs the optional "
                              "dependency 'tensorboardX' (pip install tensorboardX)") from None
        self._writer = _Writer(logdir=log_dir, comment=comment, purge_step=purge_step,
                               max_queue=max_queue, flush_secs=flush_secs,
                               filename_suffix=filename_suffix)
        self.log_dir = self._writer.logdir

    def get_logdir(self):
        return self.log_dir

    def add_scalar(self, tag, scalar_value, global_step=None, walltime=None,
                   new_style=False, double_precision=False):
        value = scalar_value.item() if hasattr(scalar_value, "_keyset") else scalar_value
        self._writer.add_scalar(tag, value, global_step, walltime)

    def add_scalars(self, main_tag, tag_scalar_dict, global_step=None, walltime=None):
        values = {k: (v.item() if hasattr(v, "_keyset") else v)
                  for k, v in tag_scalar_dict.items()}
        self._writer.add_scalars(main_tag, values, global_step, walltime)

    def add_histogram(self, tag, values, global_step=None, bins="tensorflow", walltime=None,
                      max_bins=None):
        self._writer.add_histogram(tag, _to_numpy(values), global_step, bins, walltime,
                                   max_bins)

    def add_image(self, tag, img_tensor, global_step=None, walltime=None, dataformats="CHW"):
        self._writer.add_image(tag, _to_numpy(img_tensor), global_step, walltime, dataformats)

    def add_text(self, tag, text_string, global_step=None, walltime=None):
        self._writer.add_text(tag, text_string, global_step, walltime)

    def add_hparams(self, hparam_dict, metric_dict, hparam_domain_discrete=None, run_name=None,
                    global_step=None):
        self._writer.add_hparams(hparam_dict, metric_dict, name=run_name,
                                 global_step=global_step)

    def flush(self):
        self._writer.flush()

    def close(self):
        self._writer.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
