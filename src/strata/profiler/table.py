"""The text table of ``key_averages().table()``, laid out like PyTorch's
(``torch/autograd/profiler_util.py``, ``_build_table``): the same columns, widths and formats,
so a reader can put the two side by side."""

COLUMN_WIDTH = 12
SPACING = 2


def format_time(time_us) -> str:
    if time_us >= 1e6:
        return f"{time_us / 1e6:.3f}s"
    if time_us >= 1e3:
        return f"{time_us / 1e3:.3f}ms"
    return f"{time_us:.3f}us"


def format_time_share(time_us, total_us) -> str:
    if total_us == 0:
        return "NaN"
    return f"{time_us * 100.0 / total_us:.2f}%"


def format_memory(nbytes) -> str:
    kb, mb, gb = 1024, 1024 ** 2, 1024 ** 3
    if abs(nbytes) >= gb:
        return f"{nbytes / gb:.2f} GB"
    if abs(nbytes) >= mb:
        return f"{nbytes / mb:.2f} MB"
    if abs(nbytes) >= kb:
        return f"{nbytes / kb:.2f} KB"
    return f"{nbytes} B"


def _in_unit(time_us, unit):
    if unit == "s":
        return f"{time_us / 1e6:.3f}s"
    if unit == "ms":
        return f"{time_us / 1e3:.3f}ms"
    if unit == "us":
        return f"{time_us:.3f}us"
    return format_time(time_us)


def _trim_path(path, width):
    if len(path) > width:
        path = "..." + path[len(path) - width + 3:]
    return path


def build_table(events, *, sort_by=None, row_limit=100, header=None, max_src_column_width=75,
                max_name_column_width=55, max_shapes_column_width=80,
                top_level_events_only=False, time_unit=None, use_device=None,
                profile_memory=False) -> str:
    if len(events) == 0:
        return ""
    has_device_time = any(e.self_device_time_total > 0 for e in events)
    has_device_mem = any(e.self_device_memory_usage != 0 for e in events)
    has_shapes = any(e.input_shapes for e in events)
    has_overloads = any(e.overload_name for e in events)
    stacks = [e.stack for e in events if e.stack]
    if sort_by is not None:
        events = sorted(events, key=lambda e: getattr(e, sort_by), reverse=True)

    name_width = min(max(len(e.key) for e in events) + 4, max_name_column_width)
    shapes_width = min(max(len(str(e.input_shapes)) for e in events) + 4,
                       max_shapes_column_width)
    src_width = min(max(len(s) for st in stacks for s in st) + 4,
                    max_src_column_width) if stacks else 0
    device = (use_device or "device").upper()

    headers = ["Name"] + (["Overload Name"] if has_overloads else [])
    widths = [name_width] * len(headers)
    time_headers = ["Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"]
    if has_device_time:
        time_headers += [f"Self {device}", f"Self {device} %", f"{device} total",
                         f"{device} time avg"]
    if profile_memory:
        time_headers += ["CPU Mem", "Self CPU Mem"]
        if has_device_mem:
            time_headers += [f"{device} Mem", f"Self {device} Mem"]
    time_headers.append("# of Calls")
    headers += time_headers
    widths += [COLUMN_WIDTH] * len(time_headers)
    if has_shapes:
        headers.append("Input Shapes")
        widths.append(shapes_width)
    if stacks:
        headers.append("Source Location")
        widths.append(src_width)

    aligns = [">"] * len(widths)
    if stacks:
        aligns[-1] = "<"
    row_format = "".join(f"{{: {a}{w}}}" + " " * SPACING for a, w in zip(aligns, widths))
    separator = "".join("-" * w + " " * SPACING for w in widths)
    line_length = sum(widths) + SPACING * (len(widths) - 1)

    self_cpu_total = sum(e.self_cpu_time_total for e in events)
    self_device_total = sum(e.self_device_time_total for e in events
                            if not e.is_user_annotation)
    lines = []
    if header is not None:
        lines += ["=" * line_length, header]
    if top_level_events_only:
        lines += ["=" * line_length, "This report only display top-level ops statistics"]
    lines += [separator, row_format.format(*headers), separator]

    shown = 0
    for e in events:
        if shown == row_limit:
            break
        if top_level_events_only and e.cpu_parent is not None:
            continue
        shown += 1
        name = e.key
        if len(name) >= max_name_column_width - 3:
            name = name[:max_name_column_width - 3] + "..."
        row = [name] + ([e.overload_name] if has_overloads else [])
        row += [format_time_share(e.self_cpu_time_total, self_cpu_total),
                _in_unit(e.self_cpu_time_total, time_unit),
                format_time_share(e.cpu_time_total, self_cpu_total),
                _in_unit(e.cpu_time_total, time_unit),
                _in_unit(e.cpu_time, time_unit)]
        if has_device_time:
            row += [_in_unit(e.self_device_time_total, time_unit),
                    format_time_share(e.self_device_time_total, self_device_total),
                    _in_unit(e.device_time_total, time_unit),
                    _in_unit(e.device_time, time_unit)]
        if profile_memory:
            row += [format_memory(e.cpu_memory_usage), format_memory(e.self_cpu_memory_usage)]
            if has_device_mem:
                row += [format_memory(e.device_memory_usage),
                        format_memory(e.self_device_memory_usage)]
        row.append(e.count)
        if has_shapes:
            row.append(str(e.input_shapes)[:shapes_width])
        if stacks:
            row.append(_trim_path(e.stack[0], src_width) if e.stack else "")
        lines.append(row_format.format(*row))
        if stacks:
            for entry in e.stack[1:]:
                lines.append(row_format.format(*([""] * (len(headers) - 1)
                                                 + [_trim_path(entry, src_width)])))
            lines.append(row_format.format(*([""] * len(headers))))
    lines.append(separator)
    lines.append(f"Self CPU time total: {_in_unit(self_cpu_total, time_unit)}")
    if has_device_time:
        lines.append(f"Self {device} time total: {_in_unit(self_device_total, time_unit)}")
    return "\n".join(lines) + "\n"
