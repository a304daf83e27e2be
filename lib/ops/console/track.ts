/**
 * The tracking page's script (shared/tracking/page.ts), bundled to `/ops/assets/track.js`: reads the token from the
 * page's address, shows what X29 answers and asks again every `data-refresh-ms` (30 s). Text only (`textContent`):
 * nothing X29 carries is ever read as markup. Not a part of the console: it shares only the build.
 */

interface Tracking {
  organisation_name: string;
  task_ref: string;
  status: 'scheduled' | 'on_the_way' | 'delivered' | 'failed' | 'cancelled';
  failure_reason: string | null;
  window: { start_time_utc: string | null; end_time_utc: string | null } | null;
  eta_utc: string | null;
  city: string | null;
  driver_first_name: string | null;
  driver_position: { latitude: number; longitude: number } | null;
}

const byId = (id: string) => document.getElementById(id) as HTMLElement;
const put = (id: string, value: string) => {
  byId(id).textContent = value;
};

const STATUS_WORDS: Record<Tracking['status'], string> = {
  scheduled: 'Scheduled',
  on_the_way: 'On the way to you',
  delivered: 'Delivered',
  failed: 'Not delivered',
  cancelled: 'Cancelled',
};
const REASON_WORDS: Record<string, string> = {
  recipient_absent: 'nobody was there to receive it',
  address_not_found: 'the address could not be found',
  refused: 'it was refused',
  damaged: 'it was damaged',
  access_denied: 'the driver could not get in',
  other: 'the driver could not deliver it',
};

const time = (iso: string | null) =>
  iso ? new Date(iso).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' }) : '';
const day = (iso: string | null) =>
  iso ? new Date(iso).toLocaleDateString([], { day: 'numeric', month: 'short' }) : '';

function show(tracking: Tracking) {
  put('org', tracking.organisation_name);
  put('ref', tracking.task_ref);
  const reason = tracking.failure_reason ? `: ${REASON_WORDS[tracking.failure_reason] ?? tracking.failure_reason}` : '';
  put('status', `${STATUS_WORDS[tracking.status]}${reason}`);
  put('eta', tracking.eta_utc ? `about ${time(tracking.eta_utc)}` : '—');
  const w = tracking.window;
  put('window', w ? `${day(w.start_time_utc)} ${time(w.start_time_utc)}–${time(w.end_time_utc)}` : '—');
  put('driver', tracking.driver_first_name ?? '—');
  const p = tracking.driver_position;
  put('position', p ? `${p.latitude.toFixed(3)}, ${p.longitude.toFixed(3)}` : '—');
  put('city', tracking.city ?? '—');
  byId('facts').hidden = false;
  put('updated', `Updated ${time(new Date().toISOString())}`);
}

const token = decodeURIComponent(location.pathname.split('/').pop() ?? '');
const refreshMs = Number(document.body.dataset['refreshMs']) || 30_000;

async function refresh() {
  try {
    const response = await fetch(`/v1/tracking/${encodeURIComponent(token)}`, { cache: 'no-store' });
    if (response.status === 404) {
      put('status', 'This tracking link no longer works. Ask the sender for a new one.');
      byId('facts').hidden = true;
      return; // nothing more to ask
    }
    if (response.ok) show(((await response.json()) as { tracking: Tracking }).tracking);
    else put('updated', 'Could not refresh just now; trying again shortly.');
  } catch {
    put('updated', 'Offline; trying again shortly.');
  }
  setTimeout(refresh, refreshMs);
}

void refresh();
