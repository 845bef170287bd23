// The endpoints of the project: each by its name and URL, with its state as a badge, its success rate and
// what waits for it, and a button that opens the form to add one (endpoint-create.tsx). Deleting is on
// the endpoint's own screen, behind a confirmation.
import { useEffect, useState } from 'preact/hooks';
import { call, type Schemas } from '../api.ts';
import { useLocale } from '../i18n/index.ts';
import { follow } from '../router.ts';
import { EndpointBadge, Failure, labelOf, whereOf } from './common.tsx';
import { CreateEndpoint } from './endpoint-create.tsx';

type Listed = Schemas['DestinationList']['data'][number];

export function EndpointsScreen() {
  const { t, number, percent } = useLocale();
  const [endpoints, setEndpoints] = useState<Listed[]>();
  const [failure, setFailure] = useState<unknown>();
  useEffect(
    () =>
      void call<Schemas['DestinationList']>('GET', '/core/v1/destinations').then(
        (r) => setEndpoints(r.data),
        setFailure,
      ),
    [],
  );
  const rate = (endpoint: Listed) =>
    endpoint.last24h.attempts === 0 ? '—' : percent(endpoint.last24h.succeeded / endpoint.last24h.attempts);
  return (
    <>
      <h1 tabIndex={-1}>{t('endpoints.title')}</h1>
      <Failure error={failure} />
      {endpoints === undefined ? (
        <p>{t('loading')}</p>
      ) : endpoints.length === 0 ? (
        <p>{t('endpoints.empty')}</p>
      ) : (
        <table>
          <thead>
            <tr>
              <th scope="col">{t('endpoints.url')}</th>
              <th scope="col">{t('endpoints.state')}</th>
              <th scope="col">{t('endpoints.types')}</th>
              <th scope="col">{t('endpoints.success')}</th>
              <th scope="col">{t('endpoints.waiting')}</th>
            </tr>
          </thead>
          <tbody>
            {endpoints.map((endpoint) => (
              <tr key={endpoint.id} data-failing={!endpoint.active || undefined}>
                <td>
                  <a
                    href={`/portal/endpoints/${endpoint.id}`}
                    onClick={(e) => follow(e, `/portal/endpoints/${endpoint.id}`)}
                  >
                    {labelOf(t, endpoint)}
                  </a>
                  {endpoint.name && <span class="under">{whereOf(t, endpoint)}</span>}
                </td>
                <td>
                  <EndpointBadge endpoint={endpoint} />
                </td>
                <td>{endpoint.eventTypes.join(', ')}</td>
                <td>{rate(endpoint)}</td>
                <td>{number(endpoint.waiting)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <CreateEndpoint />
    </>
  );
}
